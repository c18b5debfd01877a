// The text form of a Schedule: a small header, then one line per rank. Load, dump, save.
//
//   # meshscope schedule v1
//   name 1f1b
//   mesh dp=1 pp=2 tp=1
//   stages 2
//   microbatches 2
//   stage_owner 0 1
//   rank 0: 0F0 0SEND_F0@1:4096 0F1 0SEND_F1@1:4096 0RECV_B0@1:4096 0B0 ...
//   rank 1: 1RECV_F0@0:4096 1F0 1B0 1SEND_B0@0:4096 ...
//
// Rules: '#' starts a comment that runs to the end of the line; blank lines are ignored; the
// header keywords come before the first rank line, each at most once. `mesh` and `microbatches`
// are required; `stages` defaults to pp, `stage_owner` to s % pp, `name` to "custom" (a family's
// name on an edited dump is read as "<name>-edited", schedule_file.h). Every rank of the mesh has
// exactly one line (possibly empty after the colon); actions are the tokens of action.h separated
// by blanks. Semantic checks (work, ordering, matching) are the validator's.
// Tokens from torch's schedules (marker.h) are read and written too: "(0F3;3B1)OVERLAP_F_B" for an
// overlapped group, the kept markers "0UNSHARD", "0WAIT_SEND_F3", ..., and "-" for an idle step.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

// A malformed schedule text. what() reads "run.sched:4:17: unknown action 'FOO' in '3FOO2'".
class ScheduleParseError : public std::runtime_error {
 public:
  ScheduleParseError(std::string source, int line, int column, const std::string& reason);
  const std::string& source() const { return source_; }
  int line() const { return line_; }      // 1-based; 0 when the whole file is at fault
  int column() const { return column_; }  // 1-based; 0 when the whole line is at fault
  const std::string& reason() const { return reason_; }

 private:
  std::string source_;
  int line_;
  int column_;
  std::string reason_;
};

// Limits that keep a malformed header from asking for absurd allocations.
inline constexpr int kMaxRanks = 1 << 20;
inline constexpr int kMaxStages = 1 << 20;
inline constexpr int kMaxMicrobatches = 1 << 24;
// A schedule file larger than this is refused before it is read whole (assumption: the largest
// generated schedules, 1024 ranks x 1000 actions of ~14 bytes, are ~15 MB; 64 MiB leaves room).
inline constexpr uintmax_t kMaxScheduleFileBytes = uintmax_t{64} << 20;
// Longest schedule name accepted (it names runs in tables and traces).
inline constexpr size_t kMaxScheduleNameBytes = 200;

std::string dump(const Schedule& schedule);
// Where each rank's line and each of its actions are in a schedule text (1-based), so that an
// error the validator finds in a loaded schedule names the line and column an editor goes to.
struct ScheduleTextPositions {
  std::vector<int> rank_line;                   // by rank
  std::vector<std::vector<int>> action_column;  // by rank, by action (an OVERLAP_F_B group's
                                                // actions share its token's column)
};

// Throws ScheduleParseError; `source_name` is used only in messages. `positions`, when given, is
// filled.
Schedule load(std::string_view text, std::string_view source_name = "<schedule>",
              ScheduleTextPositions* positions = nullptr);
// Reads a whole file; an unreadable file throws ScheduleParseError with line 0.
Schedule load_file(const std::string& path);
// The bytes of a schedule file, with load_file's errors (schedule_file.h reads either format).
std::string read_schedule_file(const std::string& path);
// Writes dump(schedule) to `path` whole or not at all (temp file + rename); throws
// std::runtime_error naming the path on failure.
void save_file(const Schedule& schedule, const std::string& path);

}  // namespace meshscope::schedule
