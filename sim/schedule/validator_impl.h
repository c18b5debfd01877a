// Internal to the validator: the per-rank state of the simulation and the Validator class, split
// over validator.cpp (structure and completeness checks) and validator_run.cpp (the simulation).
#pragma once

#include <array>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/validator.h"

namespace meshscope::schedule::detail {

// What has happened to one (stage, microbatch) on one rank.
enum Flag : uint16_t {
  kDidF = 1 << 0,
  kDidB = 1 << 1,
  kDidI = 1 << 2,
  kDidW = 1 << 3,
  kGotF = 1 << 4,    // RECV_F ran
  kGotB = 1 << 5,    // RECV_B ran
  kSentF = 1 << 6,   // SEND_F ran
  kSentB = 1 << 7,   // SEND_B ran
  kTakenF = 1 << 8,  // this rank's SEND_F was received
  kTakenB = 1 << 9,  // this rank's SEND_B was received
};

enum class Status : uint8_t { kQueued, kBlocked, kDone };

struct RankState {
  size_t pc = 0;
  Status status = Status::kQueued;
  bool arrived = false;              // registered at the rendezvous its pc points to
  std::vector<uint16_t> flags;       // [slot * microbatches + mb]
  std::vector<int32_t> sent_f_step;  // step of the SEND_F of (slot, mb), -1 if none
  std::vector<int32_t> sent_b_step;
  std::vector<int32_t> grads_done;  // [slot]: microbatches whose gradient work is complete
  // [slot]: its gradients reduced over dp after all its gradient work: an ALLREDUCE(dp), or under
  // ZeRO a REDUCESCATTER(dp) (each replica keeps its shard; the ALLGATHER after STEP shares them).
  std::vector<uint8_t> allreduced;
  std::vector<uint8_t> scattered;  // [slot]: a REDUCESCATTER(dp) ran (ZeRO)
  std::vector<int32_t> stepped;    // [slot]: step of its STEP, -1 if none
  std::array<int64_t, static_cast<size_t>(mesh::GroupKind::kCount)> seq{};  // rendezvous count
};

// One collective operation (or one tp-synchronised compute) while its members arrive.
struct Instance {
  int arrived = 0;
  int passed = 0;
  int first_rank = -1;
  int first_step = -1;
};

class Validator {
 public:
  explicit Validator(const Schedule& s) : s_(s) {}
  ValidationResult run();

 private:
  enum class Outcome { kDone, kBlocked, kFailed };

  // validator.cpp
  bool check_header();
  bool check_actions();
  bool check_action(int rank, int step, const Action& a);
  bool allocate();
  bool check_complete();
  bool check_rank_sends(int rank);
  bool check_rank_complete(int rank);
  // validator_run.cpp
  bool simulate();
  bool run_rank(int rank);
  Outcome execute(int rank, const Action& a);
  Outcome compute(int rank, const Action& a);
  Outcome send(int rank, const Action& a);
  Outcome recv(int rank, const Action& a);
  Outcome step(int rank, const Action& a);
  Outcome rendezvous(int rank, const Action& a, mesh::GroupKind g);
  bool explain_stuck();
  std::optional<int> waits_for(int rank) const;

  // Helpers shared by both files.
  Outcome fail(ErrorKind kind, int rank, const std::string& reason);
  bool fail_at(ErrorKind kind, int rank, int step, const std::string& reason);
  std::string where(int rank, int step) const;
  size_t index(int stage, int mb) const { return static_cast<size_t>(slot_[stage]) * m_ + mb; }
  int owner_rank(int rank, int stage) const;
  bool local(int rank, int stage) const { return s_.stage_owner[stage] == coord_[rank].pp; }

  const Schedule& s_;
  std::optional<mesh::Mesh> mesh_;
  int m_ = 0;
  std::vector<mesh::MeshCoord> coord_;
  std::vector<int> slot_;                    // [stage]: index among its owner's stages
  std::vector<std::vector<int>> pp_stages_;  // [pp]: stages held, ascending
  std::vector<RankState> state_;
  std::deque<int> queue_;
  std::unordered_map<uint64_t, Instance> instances_;
  std::optional<ValidationError> error_;
  ValidationStats stats_;
};

// "sF3", "0ALLREDUCE(dp)": an action token for messages.
std::string token_of(ActionKind kind, int stage, int mb);

}  // namespace meshscope::schedule::detail
