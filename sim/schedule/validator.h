// The schedule validator, and the execution semantics every executor and the simulator implement.
//
// Semantics (what "runs" means for each action of a rank's program, executed strictly in order):
// - Compute (F, B, I, W) runs on the rank's local data. F(s, m) needs its input: s == 0, or a
//   RECV_F(s, m) earlier on this rank, or F(s-1, m) earlier on this rank when stage s-1 lives
//   here. B(s, m) and I(s, m) need F(s, m) and the gradient of the stage output: s is the last
//   stage (the loss), or a RECV_B(s, m) earlier, or B/I(s+1, m) earlier when s+1 lives here.
//   W(s, m) needs I(s, m). Gradient work of (s, m) is B, or I and W: exactly one of the two.
// - With tp > 1, a compute action also synchronises the rank's tp group (its tensor-parallel
//   collectives are inside it): every member must run the same compute at the same position of
//   its tp-group sequence (which it shares with explicit collectives on the tp group).
// - Sends are eager: a SEND never blocks (the transport buffers it). SEND_F(s, m) needs F(s, m);
//   SEND_B(s, m) needs B(s, m) or I(s, m).
// - A RECV blocks until its matching send has run. Matching is by key, not by arrival order:
//   RECV_F(s, m) on rank r matches SEND_F(s-1, m) on the rank holding stage s-1 in r's replica and
//   tp position, and RECV_B(s, m) matches SEND_B(s+1, m) likewise (placement.h derives the peer;
//   an explicit @peer must equal it). Both sides must state the same byte count.
// - A collective blocks until every member of the rank's group (mesh.h) has reached it. The k-th
//   collective of each member on a group is one operation: kind, stage and bytes must agree.
//   ALLREDUCE(dp) of stage s reduces s's gradients: it needs all of s's gradient work done.
// - STEP(s) needs all gradient work of stage s done and, when dp > 1, an ALLREDUCE(dp) of s.
// - Every rank runs, for every stage it holds and every microbatch, one F and the gradient work,
//   every stage it holds steps once (after an ALLREDUCE(dp) of it when dp > 1), every send is
//   received, and the whole schedule finishes: no rank waits forever.
//
// validate() simulates exactly this with one program counter per rank, in time linear in the
// number of actions, and reports the first violation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/schedule/schedule.h"
#include "sim/schedule/schedule_grid.h"

namespace meshscope::schedule {

enum class ErrorKind : uint8_t {
  kMalformed = 0,           // inconsistent header, or an action out of range / on a wrong rank
  kMissingWork = 1,         // an F, gradient work, STEP or dp all-reduce never runs
  kRepeatedWork = 2,        // the same work (or transfer) twice
  kMissingInput = 3,        // an action runs before its inputs exist
  kUnmatchedSend = 4,       // a send nobody receives
  kUnmatchedRecv = 5,       // a receive whose send never happens
  kTransferMismatch = 6,    // send and recv disagree (bytes, or an explicit peer that is wrong)
  kCollectiveMismatch = 7,  // members of a group disagree (order, kind, stage, bytes) or miss one
  kDeadlock = 8,            // ranks wait on each other forever
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(ErrorKind::kCount)>
    kErrorKindNames = {"malformed",         "missing work",        "repeated work",
                       "missing input",     "send without recv",   "recv without send",
                       "transfer mismatch", "collective mismatch", "deadlock"};
constexpr std::string_view name(ErrorKind k) { return kErrorKindNames[static_cast<size_t>(k)]; }

struct ValidationError {
  ErrorKind kind = ErrorKind::kMalformed;
  int rank = -1;  // the failing rank; -1 when the header is at fault
  int step = -1;  // index of the failing action in its program (== its length: "at its end")
  // One line naming rank, step and action: "rank 1 (dp0 pp1 tp0) step 4 (1B0): missing input:
  // ...". For a deadlock it names the cycle of waiting ranks.
  std::string message;
  std::vector<GridMark> marks;  // the failing cell; every waiting rank's cell for a deadlock
  std::string grid;             // format_grid() around the marks
};

struct ValidationStats {
  int64_t actions = 0;
  int64_t compute = 0;      // F, B, I, W
  int64_t transfers = 0;    // matched send/recv pairs
  int64_t collectives = 0;  // collective operations (each counted once, not per member)
  int64_t max_steps = 0;    // the longest program
};

struct ValidationResult {
  std::optional<ValidationError> error;  // the first violation; none when valid
  ValidationStats stats;                 // complete only when valid
  bool ok() const { return !error.has_value(); }
  // "valid: 1f1b, dp=1 pp=4 tp=1, 4 stages, 8 microbatches, 4 ranks, 96 actions (...)" or the
  // error message followed by the grid.
  std::string report(const Schedule& s) const;
};

ValidationResult validate(const Schedule& schedule);

}  // namespace meshscope::schedule
