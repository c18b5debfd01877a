// The validator's simulation: one program counter per rank, eager sends, blocking receives and
// rendezvous collectives, driven by a queue of runnable ranks; then why the stuck ranks are stuck.
#include <algorithm>
#include <set>

#include "sim/schedule/placement.h"
#include "sim/schedule/validator_impl.h"

namespace meshscope::schedule::detail {
namespace {

constexpr uint64_t rendezvous_key(mesh::GroupKind g, int leader, int64_t seq) {
  return (static_cast<uint64_t>(seq) << 22) | (static_cast<uint64_t>(g) << 20) |
         static_cast<uint64_t>(leader);
}

// Whether two members' actions can be the same group operation.
bool same_operation(const Action& a, const Action& b) {
  if (a.kind != b.kind || a.stage != b.stage) return false;
  if (is_compute(a.kind)) return a.microbatch == b.microbatch;
  return a.bytes == b.bytes;
}

// The group an action waits for when it blocks without being a receive: its own group for a
// collective; the tp group for compute (only ever blocking when tp > 1).
mesh::GroupKind rendezvous_group(const Action& a) {
  return is_collective(a.kind) ? a.group : mesh::GroupKind::kTp;
}

}  // namespace

bool Validator::simulate() {
  for (int r = 0; r < static_cast<int>(state_.size()); ++r) queue_.push_back(r);
  while (!queue_.empty()) {
    const int r = queue_.front();
    queue_.pop_front();
    if (!run_rank(r)) return false;
  }
  for (const RankState& st : state_) {
    if (st.status != Status::kDone) return explain_stuck();
  }
  return true;
}

bool Validator::run_rank(int r) {
  RankState& st = state_[r];
  const auto& program = s_.ranks[r];
  while (st.pc < program.size()) {
    const Outcome o = execute(r, program[st.pc]);
    if (o == Outcome::kFailed) return false;
    if (o == Outcome::kBlocked) {
      st.status = Status::kBlocked;
      return true;
    }
    ++st.pc;
  }
  st.status = Status::kDone;
  return true;
}

Validator::Outcome Validator::execute(int r, const Action& a) {
  if (is_compute(a.kind)) return compute(r, a);
  if (is_send(a.kind)) return send(r, a);
  if (is_recv(a.kind)) return recv(r, a);
  if (is_collective(a.kind)) {
    const bool dp = a.group == mesh::GroupKind::kDp;
    RankState& st = state_[r];
    const int slot = slot_[a.stage];
    // Under hybrid ZeRO-3 each microbatch's reduce-scattered shard is all-reduced across the
    // shard groups at once (sim/predict/zero.cpp): an ALLREDUCE(dp) after a REDUCESCATTER(dp).
    if (a.kind == ActionKind::kAllReduce && dp && st.grads_done[slot] < m_ && !st.scattered[slot]) {
      return fail(ErrorKind::kMissingInput, r,
                  "all-reduces stage " + std::to_string(a.stage) +
                      "'s gradients before its gradient work is done (" +
                      std::to_string(st.grads_done[slot]) + " of " + std::to_string(m_) +
                      " microbatches)");
    }
    const Outcome o = rendezvous(r, a, a.group);
    if (o == Outcome::kDone && dp) {
      if (a.kind == ActionKind::kReduceScatter) st.scattered[slot] = 1;
      // ZeRO-2 and 3 reduce-scatter after each microbatch's backward: the one after the last
      // completes the reduction.
      if ((a.kind == ActionKind::kAllReduce || a.kind == ActionKind::kReduceScatter) &&
          st.grads_done[slot] == m_)
        st.allreduced[slot] = 1;
    }
    return o;
  }
  return step(r, a);
}

Validator::Outcome Validator::compute(int r, const Action& a) {
  RankState& st = state_[r];
  const int s = a.stage, mb = a.microbatch;
  uint16_t& f = st.flags[index(s, mb)];
  const std::string what = "stage " + std::to_string(s) + " microbatch " + std::to_string(mb);
  const auto needs = [&](const std::string& reason) {
    return fail(ErrorKind::kMissingInput, r, reason);
  };
  switch (a.kind) {
    case ActionKind::kForward:
      if (f & kDidF) return fail(ErrorKind::kRepeatedWork, r, "forward of " + what + " ran before");
      if (s > 0 && local(r, s - 1) && !(st.flags[index(s - 1, mb)] & kDidF)) {
        return needs("its input comes from stage " + std::to_string(s - 1) + " on this rank, but " +
                     token_of(ActionKind::kForward, s - 1, mb) + " has not run");
      }
      if (s > 0 && !local(r, s - 1) && !(f & kGotF)) {
        return needs("its input has not arrived: no " + token_of(ActionKind::kRecvForward, s, mb) +
                     " before it");
      }
      break;
    case ActionKind::kBackward:
    case ActionKind::kInputGrad:
      if (f & (kDidB | kDidI)) {
        return fail(ErrorKind::kRepeatedWork, r, "gradient work of " + what + " ran before");
      }
      if (!(f & kDidF)) {
        return needs("its forward " + token_of(ActionKind::kForward, s, mb) + " has not run");
      }
      if (s + 1 < s_.num_stages && local(r, s + 1) &&
          !(st.flags[index(s + 1, mb)] & (kDidB | kDidI))) {
        return needs("its output gradient comes from stage " + std::to_string(s + 1) +
                     " on this rank, but neither " + token_of(ActionKind::kBackward, s + 1, mb) +
                     " nor " + token_of(ActionKind::kInputGrad, s + 1, mb) + " has run");
      }
      if (s + 1 < s_.num_stages && !local(r, s + 1) && !(f & kGotB)) {
        return needs("its output gradient has not arrived: no " +
                     token_of(ActionKind::kRecvBackward, s, mb) + " before it");
      }
      break;
    case ActionKind::kWeightGrad:
      if (f & (kDidW | kDidB)) {
        return fail(ErrorKind::kRepeatedWork, r,
                    "the weight gradient of " + what + " was computed before");
      }
      if (!(f & kDidI)) {
        return needs("its input gradient " + token_of(ActionKind::kInputGrad, s, mb) +
                     " has not run");
      }
      break;
    default:
      break;
  }
  if (s_.mesh.tp > 1) {
    const Outcome o = rendezvous(r, a, mesh::GroupKind::kTp);
    if (o != Outcome::kDone) return o;
  }
  const uint16_t bit = a.kind == ActionKind::kForward     ? kDidF
                       : a.kind == ActionKind::kBackward  ? kDidB
                       : a.kind == ActionKind::kInputGrad ? kDidI
                                                          : kDidW;
  f |= bit;
  if (bit == kDidB || bit == kDidW) ++st.grads_done[slot_[s]];
  return Outcome::kDone;
}

Validator::Outcome Validator::send(int r, const Action& a) {
  RankState& st = state_[r];
  const bool forward = a.kind == ActionKind::kSendForward;
  const size_t i = index(a.stage, a.microbatch);
  const uint16_t need = forward ? kDidF : (kDidB | kDidI);
  if (!(st.flags[i] & need)) {
    return fail(ErrorKind::kMissingInput, r,
                forward ? "sends the output of " +
                              token_of(ActionKind::kForward, a.stage, a.microbatch) +
                              ", which has not run"
                        : "sends the input gradient of stage " + std::to_string(a.stage) +
                              " microbatch " + std::to_string(a.microbatch) + ", but neither " +
                              token_of(ActionKind::kBackward, a.stage, a.microbatch) + " nor " +
                              token_of(ActionKind::kInputGrad, a.stage, a.microbatch) + " has run");
  }
  const uint16_t sent = forward ? kSentF : kSentB;
  if (st.flags[i] & sent) return fail(ErrorKind::kRepeatedWork, r, "the same data was sent before");
  st.flags[i] |= sent;
  (forward ? st.sent_f_step : st.sent_b_step)[i] = static_cast<int32_t>(st.pc);
  const int peer = owner_rank(r, p2p_peer_stage(a));
  if (state_[peer].status == Status::kBlocked) {
    state_[peer].status = Status::kQueued;
    queue_.push_back(peer);
  }
  return Outcome::kDone;
}

Validator::Outcome Validator::recv(int r, const Action& a) {
  RankState& st = state_[r];
  const bool forward = a.kind == ActionKind::kRecvForward;
  const uint16_t got = forward ? kGotF : kGotB;
  uint16_t& f = st.flags[index(a.stage, a.microbatch)];
  if (f & got) return fail(ErrorKind::kRepeatedWork, r, "the same data was received before");
  const int from_stage = p2p_peer_stage(a);
  const int peer = owner_rank(r, from_stage);
  RankState& sender = state_[peer];
  const size_t j = index(from_stage, a.microbatch);
  if (!(sender.flags[j] & (forward ? kSentF : kSentB))) return Outcome::kBlocked;
  const int send_step = (forward ? sender.sent_f_step : sender.sent_b_step)[j];
  const Action& sent = s_.ranks[peer][send_step];
  if (sent.bytes != a.bytes) {
    return fail(ErrorKind::kTransferMismatch, r,
                "receives " + std::to_string(a.bytes) + " bytes but " + where(peer, send_step) +
                    " sends " + std::to_string(sent.bytes));
  }
  sender.flags[j] |= forward ? kTakenF : kTakenB;
  f |= got;
  ++stats_.transfers;
  return Outcome::kDone;
}

Validator::Outcome Validator::step(int r, const Action& a) {
  RankState& st = state_[r];
  const int slot = slot_[a.stage];
  const std::string stage = std::to_string(a.stage);
  if (st.stepped[slot] >= 0) {
    return fail(ErrorKind::kRepeatedWork, r,
                "stage " + stage + " already stepped at step " + std::to_string(st.stepped[slot]));
  }
  if (st.grads_done[slot] < m_) {
    return fail(ErrorKind::kMissingInput, r,
                "steps stage " + stage + " before all its gradient work is done (" +
                    std::to_string(st.grads_done[slot]) + " of " + std::to_string(m_) +
                    " microbatches)");
  }
  if (s_.mesh.dp > 1 && !st.allreduced[slot]) {
    return fail(ErrorKind::kMissingInput, r,
                "steps stage " + stage + " before the dp all-reduce of its gradients (no " + stage +
                    "ALLREDUCE(dp), nor under ZeRO a " + stage + "REDUCESCATTER(dp), before it)");
  }
  st.stepped[slot] = static_cast<int32_t>(st.pc);
  return Outcome::kDone;
}

Validator::Outcome Validator::rendezvous(int r, const Action& a, mesh::GroupKind g) {
  RankState& st = state_[r];
  const size_t gi = static_cast<size_t>(g);
  const int size = mesh_->extent(g);
  if (size == 1) {
    if (is_collective(a.kind)) ++stats_.collectives;
    return Outcome::kDone;
  }
  const uint64_t key = rendezvous_key(g, mesh_->peer_in_group(g, r, 0), st.seq[gi]);
  Instance& in = instances_[key];
  if (!st.arrived) {
    if (in.first_rank >= 0 && !same_operation(a, s_.ranks[in.first_rank][in.first_step])) {
      const std::string group = std::string(mesh::name(g));
      return fail(ErrorKind::kCollectiveMismatch, r,
                  "operation #" + std::to_string(st.seq[gi]) + " of its " + group +
                      " group, where " + where(in.first_rank, in.first_step) +
                      (is_compute(a.kind) ? " (tp ranks must run the same compute in the same "
                                            "order: tp collectives are inside compute)"
                                          : " (kind, stage and bytes must agree)"));
    }
    if (in.first_rank < 0) {
      in.first_rank = r;
      in.first_step = static_cast<int>(st.pc);
    }
    st.arrived = true;
    if (++in.arrived == size) {
      if (is_collective(a.kind)) ++stats_.collectives;
      for (int member : mesh_->group_ranks(g, r)) {
        if (state_[member].status == Status::kBlocked) {
          state_[member].status = Status::kQueued;
          queue_.push_back(member);
        }
      }
    }
  }
  if (in.arrived < size) return Outcome::kBlocked;
  st.arrived = false;
  ++st.seq[gi];
  if (++in.passed == size) instances_.erase(key);
  return Outcome::kDone;
}

// The rank that `rank` (blocked) waits for.
std::optional<int> Validator::waits_for(int rank) const {
  const RankState& st = state_[rank];
  const Action& a = s_.ranks[rank][st.pc];
  if (is_recv(a.kind)) return owner_rank(rank, p2p_peer_stage(a));
  const mesh::GroupKind g = rendezvous_group(a);
  const size_t gi = static_cast<size_t>(g);
  for (int member : mesh_->group_ranks(g, rank)) {
    const RankState& other = state_[member];
    const bool there = other.arrived && other.seq[gi] == st.seq[gi] &&
                       rendezvous_group(s_.ranks[member][other.pc]) == g;
    if (!there) return member;
  }
  return std::nullopt;
}

bool Validator::explain_stuck() {
  std::vector<int> blocked;
  for (int r = 0; r < static_cast<int>(state_.size()); ++r) {
    if (state_[r].status == Status::kBlocked) blocked.push_back(r);
  }
  // A wait on something that can never come is a missing partner, not a deadlock.
  for (int r : blocked) {
    const Action& a = s_.ranks[r][state_[r].pc];
    if (is_recv(a.kind)) {
      const int peer = owner_rank(r, p2p_peer_stage(a));
      const ActionKind send_kind =
          a.kind == ActionKind::kRecvForward ? ActionKind::kSendForward : ActionKind::kSendBackward;
      const auto& program = s_.ranks[peer];
      const bool exists = std::any_of(program.begin(), program.end(), [&](const Action& b) {
        return b.kind == send_kind && b.stage == p2p_peer_stage(a) && b.microbatch == a.microbatch;
      });
      if (!exists) {
        fail(ErrorKind::kUnmatchedRecv, r,
             "waits for " + token_of(send_kind, p2p_peer_stage(a), a.microbatch) + " from rank " +
                 std::to_string(peer) + ", which rank " + std::to_string(peer) + " never runs");
        return false;
      }
      continue;
    }
    const std::optional<int> other = waits_for(r);
    if (other && state_[*other].status == Status::kDone) {
      const mesh::GroupKind g = rendezvous_group(a);
      fail(ErrorKind::kCollectiveMismatch, r,
           "waits for rank " + std::to_string(*other) + " of its " + std::string(mesh::name(g)) +
               " group, which finishes its program without reaching this operation");
      return false;
    }
  }
  // Follow who-waits-for-whom from the first blocked rank until it closes a cycle.
  std::vector<int> chain;
  std::set<int> seen;
  for (std::optional<int> r = blocked.front(); r && !seen.count(*r); r = waits_for(*r)) {
    seen.insert(*r);
    chain.push_back(*r);
  }
  std::optional<int> closing = waits_for(chain.back());
  const auto start = std::find(chain.begin(), chain.end(), closing.value_or(chain.front()));
  std::string cycle;
  for (auto it = start; it != chain.end(); ++it) {
    const int next = (it + 1 == chain.end()) ? *start : *(it + 1);
    cycle += (cycle.empty() ? "" : "; ") + where(*it, static_cast<int>(state_[*it].pc)) +
             " waits for rank " + std::to_string(next);
  }
  fail(ErrorKind::kDeadlock, *start,
       cycle + " (" + std::to_string(blocked.size()) + " of " + std::to_string(state_.size()) +
           " ranks wait)");
  error_->message = "deadlock: " + cycle + " (" + std::to_string(blocked.size()) + " of " +
                    std::to_string(state_.size()) + " ranks wait forever)";
  for (auto it = start; it != chain.end(); ++it) {
    if (*it != *start) error_->marks.push_back({*it, static_cast<int>(state_[*it].pc)});
  }
  for (int r : blocked) {
    const GridMark mark{r, static_cast<int>(state_[r].pc)};
    if (error_->marks.size() < 16 &&
        std::find(error_->marks.begin(), error_->marks.end(), mark) == error_->marks.end()) {
      error_->marks.push_back(mark);
    }
  }
  return false;
}

}  // namespace meshscope::schedule::detail
