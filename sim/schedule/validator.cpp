// The validator's structure checks (header, each action in range and on its rank), completeness
// checks after the simulation, error formatting, and validate() itself.
#include "sim/schedule/validator.h"

#include <algorithm>

#include "sim/schedule/placement.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/validator_impl.h"

namespace meshscope::schedule {
namespace detail {

std::string token_of(ActionKind kind, int stage, int mb) {
  return to_string(Action{.kind = kind, .stage = stage, .microbatch = mb});
}

std::string Validator::where(int rank, int step) const {
  std::string out = "rank " + std::to_string(rank);
  if (mesh_) out += " (" + mesh_->describe(rank) + ")";
  const auto& program = s_.ranks[rank];
  if (step >= 0 && step < static_cast<int>(program.size())) {
    out += " step " + std::to_string(step) + " (" + to_string(program[step]) + ")";
  } else if (step >= 0) {
    out += " at the end of its program (step " + std::to_string(step) + ")";
  }
  return out;
}

bool Validator::fail_at(ErrorKind kind, int rank, int step, const std::string& reason) {
  ValidationError e;
  e.kind = kind;
  e.rank = rank;
  e.step = step;
  e.message = (rank >= 0 ? where(rank, step) + ": " : std::string()) + std::string(name(kind)) +
              ": " + reason;
  if (rank >= 0) e.marks.push_back({rank, step});
  error_ = std::move(e);
  return false;
}

Validator::Outcome Validator::fail(ErrorKind kind, int rank, const std::string& reason) {
  fail_at(kind, rank, static_cast<int>(state_[rank].pc), reason);
  return Outcome::kFailed;
}

int Validator::owner_rank(int rank, int stage) const {
  mesh::MeshCoord c = coord_[rank];
  c.pp = s_.stage_owner[stage];
  return mesh_->rank_of(c);
}

bool Validator::check_header() {
  const mesh::MeshShape& shape = s_.mesh;
  if (shape.dp < 1 || shape.pp < 1 || shape.tp < 1) {
    return fail_at(ErrorKind::kMalformed, -1, -1,
                   "mesh dimensions must be >= 1, got " + to_string(shape));
  }
  if (int64_t{shape.dp} * shape.pp * shape.tp > kMaxRanks) {
    return fail_at(ErrorKind::kMalformed, -1, -1, "mesh " + to_string(shape) + " is too large");
  }
  mesh_.emplace(shape);
  if (static_cast<int>(s_.ranks.size()) != mesh_->size()) {
    return fail_at(ErrorKind::kMalformed, -1, -1,
                   "the schedule has " + std::to_string(s_.ranks.size()) +
                       " rank programs for mesh " + to_string(shape) + " of " +
                       std::to_string(mesh_->size()) + " ranks");
  }
  if (s_.num_stages < 1 || s_.num_stages > kMaxStages) {
    return fail_at(ErrorKind::kMalformed, -1, -1,
                   "stages must be in [1, " + std::to_string(kMaxStages) + "], got " +
                       std::to_string(s_.num_stages));
  }
  if (s_.num_microbatches < 1 || s_.num_microbatches > kMaxMicrobatches) {
    return fail_at(ErrorKind::kMalformed, -1, -1,
                   "microbatches must be in [1, " + std::to_string(kMaxMicrobatches) + "], got " +
                       std::to_string(s_.num_microbatches));
  }
  if (static_cast<int>(s_.stage_owner.size()) != s_.num_stages) {
    return fail_at(ErrorKind::kMalformed, -1, -1,
                   "stage_owner has " + std::to_string(s_.stage_owner.size()) + " entries for " +
                       std::to_string(s_.num_stages) + " stages");
  }
  m_ = s_.num_microbatches;
  pp_stages_.assign(shape.pp, {});
  for (int st = 0; st < s_.num_stages; ++st) {
    const int owner = s_.stage_owner[st];
    if (owner < 0 || owner >= shape.pp) {
      return fail_at(ErrorKind::kMalformed, -1, -1,
                     "stage " + std::to_string(st) + " is owned by pp " + std::to_string(owner) +
                         ", outside pp=" + std::to_string(shape.pp));
    }
    slot_.push_back(static_cast<int>(pp_stages_[owner].size()));
    pp_stages_[owner].push_back(st);
  }
  for (int r = 0; r < mesh_->size(); ++r) coord_.push_back(mesh_->coord_of(r));
  return true;
}

bool Validator::check_action(int rank, int step, const Action& a) {
  const auto bad = [&](ErrorKind kind, const std::string& reason) {
    return fail_at(kind, rank, step, reason);
  };
  if (a.kind >= ActionKind::kCount) return bad(ErrorKind::kMalformed, "unknown action kind");
  if (a.stage < 0 || a.stage >= s_.num_stages) {
    return bad(ErrorKind::kMalformed, "stage " + std::to_string(a.stage) + " outside 0.." +
                                          std::to_string(s_.num_stages - 1));
  }
  if (!local(rank, a.stage)) {
    return bad(ErrorKind::kMalformed, "stage " + std::to_string(a.stage) + " lives on pp " +
                                          std::to_string(s_.stage_owner[a.stage]) +
                                          ", not on this rank (pp " +
                                          std::to_string(coord_[rank].pp) + ")");
  }
  const bool per_microbatch = is_compute(a.kind) || is_p2p(a.kind);
  if (per_microbatch && (a.microbatch < 0 || a.microbatch >= m_)) {
    return bad(ErrorKind::kMalformed, "microbatch " + std::to_string(a.microbatch) +
                                          " outside 0.." + std::to_string(m_ - 1));
  }
  if (!per_microbatch && a.microbatch != -1) {
    return bad(ErrorKind::kMalformed, "a per-step action takes no microbatch");
  }
  if (a.bytes < 0) return bad(ErrorKind::kMalformed, "negative byte count");
  if (is_collective(a.kind) && !is_schedule_group(a.group)) {
    return bad(ErrorKind::kMalformed, a.group < mesh::GroupKind::kCount
                                          ? "process group '" + std::string(mesh::name(a.group)) +
                                                "' is not a schedule's (world, dp, pp or tp)"
                                          : std::string("unknown process group"));
  }
  if (!is_p2p(a.kind)) return true;
  const int other = p2p_peer_stage(a);
  if (other < 0 || other >= s_.num_stages) {
    return bad(ErrorKind::kMalformed, "stage " + std::to_string(a.stage) + " has no " +
                                          (other < 0 ? "previous" : "next") +
                                          " stage to transfer with");
  }
  if (local(rank, other)) {
    return bad(ErrorKind::kMalformed, "stage " + std::to_string(other) +
                                          " is on this rank too: its data needs no transfer");
  }
  const int peer = owner_rank(rank, other);
  if (a.peer >= 0 && a.peer != peer) {
    return bad(ErrorKind::kTransferMismatch, "names peer rank " + std::to_string(a.peer) +
                                                 ", but stage " + std::to_string(other) +
                                                 " of this replica lives on rank " +
                                                 std::to_string(peer));
  }
  return true;
}

bool Validator::check_actions() {
  for (int r = 0; r < static_cast<int>(s_.ranks.size()); ++r) {
    const auto& program = s_.ranks[r];
    stats_.actions += static_cast<int64_t>(program.size());
    stats_.max_steps = std::max<int64_t>(stats_.max_steps, static_cast<int64_t>(program.size()));
    for (size_t i = 0; i < program.size(); ++i) {
      if (!check_action(r, static_cast<int>(i), program[i])) return false;
      if (is_compute(program[i].kind)) ++stats_.compute;
    }
  }
  return true;
}

bool Validator::allocate() {
  state_.resize(s_.ranks.size());
  for (int r = 0; r < static_cast<int>(s_.ranks.size()); ++r) {
    const int slots = static_cast<int>(pp_stages_[coord_[r].pp].size());
    const int64_t cells = int64_t{slots} * m_;
    const int64_t length = static_cast<int64_t>(s_.ranks[r].size());
    // Each (stage, microbatch) needs two compute actions; don't allocate for a hopeless claim.
    if (cells > std::max<int64_t>(length, 1 << 16)) {
      return fail_at(ErrorKind::kMissingWork, r, static_cast<int>(length),
                     "the rank holds " + std::to_string(slots) + " stages x " + std::to_string(m_) +
                         " microbatches but has only " + std::to_string(length) +
                         " actions (each needs an F and a B)");
    }
    RankState& st = state_[r];
    st.flags.assign(cells, 0);
    st.sent_f_step.assign(cells, -1);
    st.sent_b_step.assign(cells, -1);
    st.grads_done.assign(slots, 0);
    st.allreduced.assign(slots, 0);
    st.scattered.assign(slots, 0);
    st.stepped.assign(slots, -1);
  }
  return true;
}

bool Validator::check_rank_sends(int r) {
  const RankState& st = state_[r];
  for (int stage : pp_stages_[coord_[r].pp]) {
    for (int mb = 0; mb < m_; ++mb) {
      const uint16_t f = st.flags[index(stage, mb)];
      for (const bool forward : {true, false}) {
        const uint16_t sent = forward ? kSentF : kSentB;
        const uint16_t taken = forward ? kTakenF : kTakenB;
        if ((f & sent) && !(f & taken)) {
          const int step = (forward ? st.sent_f_step : st.sent_b_step)[index(stage, mb)];
          const int to_stage = forward ? stage + 1 : stage - 1;
          return fail_at(
              ErrorKind::kUnmatchedSend, r, step,
              "rank " + std::to_string(owner_rank(r, to_stage)) + " never runs " +
                  token_of(forward ? ActionKind::kRecvForward : ActionKind::kRecvBackward, to_stage,
                           mb));
        }
      }
    }
  }
  return true;
}

bool Validator::check_rank_complete(int r) {
  const RankState& st = state_[r];
  const int end = static_cast<int>(s_.ranks[r].size());
  for (int stage : pp_stages_[coord_[r].pp]) {
    for (int mb = 0; mb < m_; ++mb) {
      const uint16_t f = st.flags[index(stage, mb)];
      if (!(f & kDidF)) {
        return fail_at(ErrorKind::kMissingWork, r, end,
                       "stage " + std::to_string(stage) + " microbatch " + std::to_string(mb) +
                           " never runs forward (no " + token_of(ActionKind::kForward, stage, mb) +
                           ")");
      }
      if (!(f & (kDidB | kDidI))) {
        return fail_at(ErrorKind::kMissingWork, r, end,
                       "stage " + std::to_string(stage) + " microbatch " + std::to_string(mb) +
                           " never runs backward (no " +
                           token_of(ActionKind::kBackward, stage, mb) + " or " +
                           token_of(ActionKind::kInputGrad, stage, mb) + ")");
      }
      if ((f & kDidI) && !(f & kDidW)) {
        return fail_at(ErrorKind::kMissingWork, r, end,
                       "stage " + std::to_string(stage) + " microbatch " + std::to_string(mb) +
                           " runs " + token_of(ActionKind::kInputGrad, stage, mb) + " but never " +
                           token_of(ActionKind::kWeightGrad, stage, mb));
      }
    }
    const int slot = slot_[stage];
    if (s_.mesh.dp > 1 && !st.allreduced[slot]) {
      return fail_at(ErrorKind::kMissingWork, r, end,
                     "stage " + std::to_string(stage) +
                         " never reduces its gradients over dp (no " + std::to_string(stage) +
                         "ALLREDUCE(dp), nor under ZeRO a " + std::to_string(stage) +
                         "REDUCESCATTER(dp), after its gradient work); the replicas would diverge");
    }
    if (st.stepped[slot] < 0) {
      return fail_at(ErrorKind::kMissingWork, r, end,
                     "stage " + std::to_string(stage) + " never runs its optimizer step (no " +
                         std::to_string(stage) + "STEP)");
    }
  }
  return true;
}

bool Validator::check_complete() {
  // Unreceived sends first: they point at the receiver's gap more precisely than its missing work.
  for (int r = 0; r < static_cast<int>(s_.ranks.size()); ++r) {
    if (!check_rank_sends(r)) return false;
  }
  for (int r = 0; r < static_cast<int>(s_.ranks.size()); ++r) {
    if (!check_rank_complete(r)) return false;
  }
  return true;
}

ValidationResult Validator::run() {
  const bool ok = check_header() && check_actions() && allocate() && simulate() && check_complete();
  ValidationResult result;
  result.stats = stats_;
  if (!ok) {
    result.error = std::move(error_);
    if (!result.error->marks.empty()) result.error->grid = format_grid(s_, result.error->marks);
  }
  return result;
}

}  // namespace detail

std::string ValidationResult::report(const Schedule& s) const {
  if (error) return error->message + "\n" + error->grid;
  return "valid: " + s.name + ", " + to_string(s.mesh) + ", " + std::to_string(s.num_stages) +
         " stages, " + std::to_string(s.num_microbatches) + " microbatches, " +
         std::to_string(s.ranks.size()) + " ranks, " + std::to_string(stats.actions) +
         " actions (" + std::to_string(stats.compute) + " compute, " +
         std::to_string(stats.transfers) + " transfers, " + std::to_string(stats.collectives) +
         " collectives), longest program " + std::to_string(stats.max_steps) + " steps";
}

ValidationResult validate(const Schedule& schedule) { return detail::Validator(schedule).run(); }

}  // namespace meshscope::schedule
