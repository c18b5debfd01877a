// Compiling a Schedule for the event loop: durations, send/recv matching, collective instances.
#include "sim/engine/program.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/schedule/placement.h"

namespace meshscope::engine {
namespace {

using schedule::Action;
using schedule::ActionKind;

std::string where(int rank, size_t index, const Action& a) {
  return "rank " + std::to_string(rank) + " action " + std::to_string(index) + " '" +
         schedule::to_string(a) + "'";
}

int64_t compute_ns(const StageTiming& t, ActionKind k) {
  switch (k) {
    case ActionKind::kForward:
      return t.forward_ns;
    case ActionKind::kBackward:
      return t.backward_ns;
    case ActionKind::kInputGrad:
      return t.input_grad_ns;
    case ActionKind::kWeightGrad:
      return t.weight_grad_ns;
    default:
      return t.optimizer_ns;
  }
}

int group_id(const mesh::MeshShape& s, mesh::GroupKind g, const mesh::MeshCoord& c) {
  switch (g) {
    case mesh::GroupKind::kDp:
      return c.pp * s.tp + c.tp;
    case mesh::GroupKind::kPp:
      return c.dp * s.tp + c.tp;
    case mesh::GroupKind::kTp:
      return c.dp * s.pp + c.pp;
    default:
      return 0;
  }
}

// Stage -> its index among the stages its owner holds.
std::vector<int16_t> stage_slots(const schedule::Schedule& s, int* slots_per_rank) {
  std::vector<int16_t> slot(s.num_stages, 0);
  std::vector<int> count(std::max(1, s.mesh.pp), 0);
  for (int st = 0; st < s.num_stages; ++st) {
    const int owner =
        st < static_cast<int>(s.stage_owner.size()) ? s.stage_owner[st] : st % s.mesh.pp;
    if (owner < 0 || owner >= s.mesh.pp)
      throw SimulationError("stage " + std::to_string(st) + " owned by pp " +
                            std::to_string(owner) + " outside the mesh");
    slot[st] = static_cast<int16_t>(count[owner]++);
  }
  *slots_per_rank = std::max(1, *std::max_element(count.begin(), count.end()));
  return slot;
}

// True when two tp ranks' actions are the same step of the same program (peers aside).
bool same_tp_step(const Action& a, const Action& b) {
  return a.kind == b.kind && a.stage == b.stage && a.microbatch == b.microbatch &&
         a.group == b.group && a.bytes == b.bytes;
}

// Numbers each tp group's computes by position: the k-th compute of every member is one rendezvous.
void add_tp_syncs(const mesh::Mesh& mesh, Program& p) {
  std::vector<std::vector<int32_t>> by_member(mesh.size());  // [rank] -> its compute ops
  for (int r = 0; r < mesh.size(); ++r)
    for (uint32_t g = p.rank_begin[r]; g < p.rank_begin[r + 1]; ++g)
      if (schedule::is_compute(p.ops[g].kind)) by_member[r].push_back(static_cast<int32_t>(g));
  for (int r = 0; r < mesh.size(); ++r) {
    if (mesh.index_in_group(mesh::GroupKind::kTp, r) != 0) continue;
    const std::vector<int> group = mesh.group_ranks(mesh::GroupKind::kTp, r);
    size_t longest = 0;
    for (int m : group) longest = std::max(longest, by_member[m].size());
    for (size_t k = 0; k < longest; ++k) {
      Instance I;
      I.members_begin = static_cast<int32_t>(p.tp_sync_members.size());
      for (int m : group) {
        if (k >= by_member[m].size()) continue;
        const int32_t g = by_member[m][k];
        p.ops[g].aux = static_cast<int32_t>(p.tp_syncs.size());
        p.tp_sync_members.push_back(g);
      }
      // A member short of computes never arrives (the engine waits for tp members, not for
      // members_end - members_begin): the others wait, as in the validator.
      I.members_end = static_cast<int32_t>(p.tp_sync_members.size());
      p.tp_syncs.push_back(I);
    }
  }
}

}  // namespace

std::optional<int64_t> activation_delta(const StageTiming& t, ActionKind kind) {
  const int64_t w = t.weight_grad_bytes > 0 ? t.weight_grad_bytes : t.activation_bytes / 2;
  switch (kind) {
    case ActionKind::kForward:
      return t.activation_bytes;
    case ActionKind::kBackward:
      return -t.activation_bytes;
    case ActionKind::kInputGrad:
      return -(t.activation_bytes - w);
    case ActionKind::kWeightGrad:
      return -w;
    default:
      return std::nullopt;
  }
}

int64_t peak_activation(const std::vector<Action>& program,
                        const std::vector<StageTiming>& stages) {
  constexpr int kKinds = 4;  // F, B, I, W: the kinds activation_delta prices
  std::vector<int64_t> deltas(stages.size() * kKinds);
  for (size_t st = 0; st < stages.size(); ++st)
    for (int k = 0; k < kKinds; ++k)
      deltas[st * kKinds + k] = *activation_delta(stages[st], static_cast<ActionKind>(k));
  int64_t held = 0, peak = 0;
  for (const Action& a : program) {
    if (!schedule::is_compute(a.kind) || a.stage < 0 || a.stage >= static_cast<int>(stages.size()))
      continue;
    held += deltas[static_cast<size_t>(a.stage) * kKinds + static_cast<size_t>(a.kind)];
    peak = std::max(peak, held);
  }
  return peak;
}

int Program::rank_of_op(uint32_t g) const {
  auto it = std::upper_bound(rank_begin.begin(), rank_begin.end(), g);
  return static_cast<int>(it - rank_begin.begin()) - 1;
}

namespace {

// An error of pairing a SEND with its RECV. compile() reads the schedule once, so a SEND to a later
// rank meets its RECV only when that rank is read; such errors are kept, and the one of the first
// SEND in (rank, action) order is thrown after the whole schedule is read, after any error of an
// action itself (stage or microbatch out of range, a RECV twice), which is thrown at once.
struct PairingError {
  uint64_t at = UINT64_MAX;  // rank << 32 | action index of the SEND
  bool invalid_argument = false;
  std::string message;

  void keep(int rank, size_t index, std::string m, bool invalid = false) {
    const uint64_t key = uint64_t{static_cast<uint32_t>(rank)} << 32 | index;
    if (key >= at) return;
    at = key;
    invalid_argument = invalid;
    message = std::move(m);
  }
  void throw_if_any() const {
    if (at == UINT64_MAX) return;
    if (invalid_argument) throw std::invalid_argument(message);
    throw SimulationError(message);
  }
};

// The compile pass: reads every rank's actions once, in rank order, writing its ops.
class Compiler {
 public:
  Compiler(const EngineInput& in, Program& p) : in_(in), s_(*in.schedule), mesh_(s_.mesh), p_(p) {}

  void run() {
    const int ranks = mesh_.size();
    p_.slot_of_stage = stage_slots(s_, &p_.slots_per_rank);
    owner_.resize(s_.num_stages);
    for (int st = 0; st < s_.num_stages; ++st)
      owner_[st] =
          st < static_cast<int>(s_.stage_owner.size()) ? s_.stage_owner[st] : st % s_.mesh.pp;
    m_ = std::max(1, s_.num_microbatches);
    p_.num_ranks = ranks;
    p_.rank_begin.resize(ranks + 1, 0);
    for (int r = 0; r < ranks; ++r)
      p_.rank_begin[r + 1] = p_.rank_begin[r] + static_cast<uint32_t>(s_.ranks[r].size());
    p_.ops.reserve(p_.rank_begin[ranks]);
    recv_at_.assign(static_cast<size_t>(ranks) * 2 * p_.slots_per_rank * m_, -1);
    send_at_.assign(recv_at_.size(), -1);
    p_.send_begin.assign(ranks + 1, 0);
    p_.coll_begin.assign(ranks + 1, 0);
    group_seq_.assign(static_cast<size_t>(ranks) * kGroupKinds, 0);
    p_.peak_activation_bytes.assign(ranks, 0);
    deltas_.resize(in_.stages.size() * kHoldingKinds);
    for (size_t st = 0; st < in_.stages.size(); ++st)
      for (int k = 0; k < kHoldingKinds; ++k)
        deltas_[st * kHoldingKinds + k] =
            *activation_delta(in_.stages[st], static_cast<ActionKind>(k));
    for (auto& g : inst_of_) g.resize(ranks);
    for (int r = 0; r < ranks; ++r) {
      p_.send_begin[r] = static_cast<uint32_t>(p_.sends.size());
      p_.coll_begin[r] = static_cast<uint32_t>(p_.colls.size());
      read_rank(r);
    }
    p_.send_begin[ranks] = static_cast<uint32_t>(p_.sends.size());
    p_.coll_begin[ranks] = static_cast<uint32_t>(p_.colls.size());
    if (pending_ > 0) report_unmatched_sends();
    error_.throw_if_any();
    // A RECV no SEND matched: found by a scan only when there is one.
    for (size_t g = 0; matched_ != recvs_ && g < p_.ops.size(); ++g) {
      const Op& op = p_.ops[g];
      if (schedule::is_recv(op.kind) && op.aux < 0) {
        const int r = p_.rank_of_op(static_cast<uint32_t>(g));
        const size_t i = g - p_.rank_begin[r];
        throw SimulationError(where(r, i, s_.ranks[r][i]) + ": no rank sends it");
      }
    }
    build_instances();
    if (!tp_agree_) add_tp_syncs(mesh_, p_);
  }

 private:
  size_t recv_key(int rank, bool backward, int st, int mb) const {
    return ((static_cast<size_t>(rank) * 2 + backward) * p_.slots_per_rank + p_.slot_of_stage[st]) *
               m_ +
           mb;
  }

  void read_rank(int r) {
    const auto& acts = s_.ranks[r];
    // Whether every tp rank runs its group's tp 0 program action for action, checked while the
    // lead's program (a few ranks back) is still in cache.
    const int lead = s_.mesh.tp > 1 ? mesh_.peer_in_group(mesh::GroupKind::kTp, r, 0) : r;
    const auto& lead_acts = s_.ranks[lead];
    if (lead != r && lead_acts.size() != acts.size()) tp_agree_ = false;
    const bool compare = lead != r && tp_agree_;
    rank_coord_ = mesh_.coord_of(r);
    tiers_seen_ = 0;
    int64_t held = 0, peak = 0;  // activation bytes
    for (size_t i = 0; i < acts.size(); ++i) {
      const Action& a = acts[i];
      if (compare && tp_agree_ && !same_tp_step(a, lead_acts[i])) tp_agree_ = false;
      if (a.stage < 0 || a.stage >= s_.num_stages)
        throw SimulationError(where(r, i, a) + ": stage outside 0.." +
                              std::to_string(s_.num_stages - 1));
      const auto gi = static_cast<uint32_t>(p_.ops.size());
      Op& op = p_.ops.emplace_back();
      op.kind = a.kind;
      op.stage = static_cast<int16_t>(a.stage);
      const StageTiming& t = in_.stages[a.stage];
      if (schedule::is_compute(a.kind) || a.kind == ActionKind::kOptimizerStep) {
        op.value = in_.compute_action_ns ? in_.compute_action_ns(r, a) : compute_ns(t, a.kind);
        if (a.kind != ActionKind::kOptimizerStep) {
          held +=
              deltas_[static_cast<size_t>(a.stage) * kHoldingKinds + static_cast<size_t>(a.kind)];
          peak = std::max(peak, held);
        }
      } else if (schedule::is_p2p(a.kind)) {
        // A RECV keeps its own size (0: not given) until its SEND is matched to it and checked.
        op.value = a.bytes > 0 || !schedule::is_send(a.kind) ? a.bytes : t.p2p_bytes;
        if (a.microbatch < 0 || a.microbatch >= m_)
          throw SimulationError(where(r, i, a) + ": microbatch outside 0.." +
                                std::to_string(m_ - 1));
        if (schedule::is_send(a.kind)) {
          p_.sends.push_back(Send{static_cast<int32_t>(gi), -1});
          read_send(r, i, a, gi);
        } else {
          read_recv(r, i, a, gi);
        }
      } else if (schedule::is_collective(a.kind)) {
        op.value = in_.collective_ns ? in_.collective_ns(r, a) : 0;
        const int tier = in_.collective_tier ? in_.collective_tier(r, a) : -1;
        if (tier >= static_cast<int>(in_.links.size()))
          throw std::invalid_argument("simulate: collective_tier gave a tier outside links");
        coll_tiers_.push_back(tier);
        read_collective(r, a, gi);
      }
    }
    p_.peak_activation_bytes[r] = peak;
  }

  void read_send(int r, size_t i, const Action& a, uint32_t gi) {
    const int peer_stage = schedule::p2p_peer_stage(a);
    if (peer_stage < 0 || peer_stage >= s_.num_stages)
      return error_.keep(r, i, where(r, i, a) + ": sends past the last stage");
    const int peer = peer_of(r, a, peer_stage);
    if (peer < 0 || peer >= mesh_.size())
      return error_.keep(r, i, where(r, i, a) + ": no rank holds the next stage");
    p_.sends.back().peer = peer;
    const size_t cell =
        recv_key(peer, a.kind == ActionKind::kSendBackward, peer_stage, a.microbatch);
    const int32_t recv = recv_at_[cell];
    if (recv >= 0) return match(r, i, gi, peer, static_cast<uint32_t>(recv));
    if (send_at_[cell] >= 0)  // its RECV (not read yet) has a SEND already
      return error_.keep(r, i,
                         where(r, i, a) + ": its RECV on rank " + std::to_string(peer) +
                             " is already matched to another SEND");
    send_at_[cell] = static_cast<int32_t>(gi);
    p_.ops[gi].aux = r;  // until matched: its own rank, for the match and the error
    ++pending_;
  }

  // The rank receiving SEND `a` of rank r: the same dp/tp position on the pp rank owning the peer
  // stage; moving one pp step moves the global rank by tp (mesh.h rank order), so no coordinate
  // arithmetic is needed.
  int peer_of(int r, const Action& a, int peer_stage) const {
    return a.peer >= 0 ? a.peer : r + (owner_[peer_stage] - owner_[a.stage]) * s_.mesh.tp;
  }

  void read_recv(int r, size_t i, const Action& a, uint32_t gi) {
    const size_t cell = recv_key(r, a.kind == ActionKind::kRecvBackward, a.stage, a.microbatch);
    if (recv_at_[cell] >= 0)
      throw SimulationError(where(r, i, a) + ": the same RECV appears twice");
    recv_at_[cell] = static_cast<int32_t>(gi);
    ++recvs_;
    if (const int32_t pending = send_at_[cell]; pending >= 0) {
      send_at_[cell] = -1;
      --pending_;
      const auto send = static_cast<uint32_t>(pending);
      const int from = p_.ops[send].aux;
      match(from, send - p_.rank_begin[from], send, r, gi);
    }
  }

  // SEND gi (action i of rank r) meets its RECV `recv` on rank `peer`.
  void match(int r, size_t i, uint32_t gi, int peer, uint32_t recv) {
    const Action& a = s_.ranks[r][i];
    Op& rop = p_.ops[recv];
    if (rop.aux >= 0)
      return error_.keep(r, i,
                         where(r, i, a) + ": its RECV on rank " + std::to_string(peer) +
                             " is already matched to another SEND");
    const int64_t expects = rop.value;
    if (expects > 0 && a.bytes > 0 && expects != a.bytes)
      return error_.keep(r, i,
                         where(r, i, a) + ": sends " + std::to_string(a.bytes) +
                             " bytes, its RECV expects " + std::to_string(expects));
    const int tier = tier_between(r, peer);
    if (tier < 0 || tier >= static_cast<int>(in_.links.size()) || tier > UINT8_MAX)
      return error_.keep(r, i, "simulate: tier_of gave a tier outside links", true);
    rop.value = expects > 0 ? expects : in_.stages[rop.stage].p2p_bytes;
    Op& op = p_.ops[gi];
    op.aux = static_cast<int32_t>(recv);
    op.tier = static_cast<uint8_t>(tier);
    rop.aux = static_cast<int32_t>(gi);
    ++matched_;
  }

  // EngineInput::tier_of, asked once per pair of ranks in a row (a rank sends to one or two).
  int tier_between(int r, int peer) {
    if (!in_.tier_of) return 0;
    for (int k = 0; k < tiers_seen_; ++k)
      if (tier_cache_[k].rank == r && tier_cache_[k].peer == peer) return tier_cache_[k].tier;
    const int t = in_.tier_of(r, peer);
    tier_cache_[tiers_seen_ < kTierCache ? tiers_seen_++ : kTierCache - 1] = {r, peer, t};
    return t;
  }

  // Instances per (group, issue order).
  void read_collective(int r, const Action& a, uint32_t gi) {
    const int gk = static_cast<int>(a.group);
    const int gid = group_id(s_.mesh, a.group, rank_coord_);
    const int k = group_seq_[static_cast<size_t>(r) * kGroupKinds + gk]++;
    auto& list = inst_of_[gk][gid];
    Op& op = p_.ops[gi];
    if (k == static_cast<int>(list.size())) {
      list.push_back(static_cast<int32_t>(p_.instances.size()));
      p_.instances.push_back(Instance{0, 0, op.value});
      inst_size_.push_back(0);
    }
    const int32_t inst = list[k];
    Instance& I = p_.instances[inst];
    op.aux = inst;
    op_instance_.push_back(inst);
    ++inst_size_[inst];
    I.duration_ns = std::max(I.duration_ns, op.value);
    p_.colls.push_back(static_cast<int32_t>(gi));
  }

  // SENDs whose RECV never came: the error of each (the first is kept).
  void report_unmatched_sends() {
    for (const int32_t pending : send_at_) {
      if (pending < 0) continue;
      const auto send = static_cast<uint32_t>(pending);
      const int r = p_.ops[send].aux;
      const size_t i = send - p_.rank_begin[r];
      const Action& a = s_.ranks[r][i];
      error_.keep(r, i,
                  where(r, i, a) + ": rank " +
                      std::to_string(peer_of(r, a, schedule::p2p_peer_stage(a))) +
                      " has no matching RECV");
    }
  }

  // Members of each instance (CSR), and a check that all members agree on what it is.
  void build_instances() {
    int32_t off = 0;
    for (size_t i = 0; i < p_.instances.size(); ++i) {
      p_.instances[i].members_begin = p_.instances[i].members_end = off;
      off += inst_size_[i];
    }
    p_.members.resize(off);
    p_.member_tiers.resize(off);
    for (size_t j = 0; j < p_.colls.size(); ++j) {
      Instance& I = p_.instances[op_instance_[j]];
      p_.member_tiers[I.members_end] = coll_tiers_[j];
      p_.members[I.members_end++] = p_.colls[j];
    }
    for (const Instance& I : p_.instances) {
      const uint32_t g0 = static_cast<uint32_t>(p_.members[I.members_begin]);
      const int r0 = p_.rank_of_op(g0);
      const Action& a0 = s_.ranks[r0][g0 - p_.rank_begin[r0]];
      const int want = mesh_.extent(a0.group);
      const int have = I.members_end - I.members_begin;
      for (int32_t k = I.members_begin; k < I.members_end; ++k) {
        const uint32_t g = static_cast<uint32_t>(p_.members[k]);
        const int r = p_.rank_of_op(g);
        const Action& a = s_.ranks[r][g - p_.rank_begin[r]];
        if (a.kind != a0.kind || a.bytes != a0.bytes)
          throw SimulationError(where(r, g - p_.rank_begin[r], a) + ": its group partner " +
                                where(r0, g0 - p_.rank_begin[r0], a0) +
                                " runs a different collective");
      }
      if (have != want)
        throw SimulationError("deadlock: " + where(r0, g0 - p_.rank_begin[r0], a0) + " waits for " +
                              std::to_string(want) + " members of its " +
                              std::string(mesh::name(a0.group)) + " group, only " +
                              std::to_string(have) + " ever issue it");
    }
  }

  struct TierOf {
    int rank = -1, peer = -1, tier = 0;
  };

  const EngineInput& in_;
  const schedule::Schedule& s_;
  const mesh::Mesh mesh_;
  Program& p_;
  std::vector<int> owner_;
  int m_ = 1;
  // (rank, dir, slot, mb) -> its RECV's op, -1: not read yet
  std::vector<int32_t, HugePageAllocator<int32_t>> recv_at_;
  // The same cell -> a SEND read before that RECV (its op's aux holds its rank meanwhile); -1:
  // none.
  std::vector<int32_t, HugePageAllocator<int32_t>> send_at_;
  size_t recvs_ = 0, matched_ = 0, pending_ = 0;
  bool tp_agree_ = true;
  mesh::MeshCoord rank_coord_;
  static constexpr size_t kGroupKinds = static_cast<size_t>(mesh::GroupKind::kCount);
  // [group kind][group id][k-th] -> instance
  std::vector<std::vector<int32_t>> inst_of_[kGroupKinds];
  std::vector<int32_t> inst_size_;
  std::vector<int> group_seq_;  // per rank and group kind, collectives issued so far
  // activation_delta of F, B, I and W (kinds 0..3) per stage, priced once; STEP holds none.
  static constexpr int kHoldingKinds = 4;
  std::vector<int64_t> deltas_;
  std::vector<int32_t> op_instance_;    // per collective in Program::colls order: its instance
  std::vector<int32_t> coll_tiers_;     // and the link tier it keeps busy
  static constexpr int kTierCache = 4;  // pairs remembered per rank (a rank sends to one or two)
  TierOf tier_cache_[kTierCache];
  int tiers_seen_ = 0;
  PairingError error_;
};

}  // namespace

Program compile(const EngineInput& in) {
  const schedule::Schedule& s = *in.schedule;
  const int ranks = s.mesh.size();
  if (static_cast<int>(s.ranks.size()) != ranks)
    throw SimulationError("schedule has " + std::to_string(s.ranks.size()) + " ranks, mesh " +
                          mesh::to_string(s.mesh) + " needs " + std::to_string(ranks));
  if (static_cast<int>(in.stages.size()) < s.num_stages)
    throw std::invalid_argument("simulate: " + std::to_string(in.stages.size()) +
                                " stage timings for " + std::to_string(s.num_stages) + " stages");
  if (s.num_stages > INT16_MAX)
    throw std::invalid_argument("simulate: more than " + std::to_string(INT16_MAX) + " stages");
  Program p;
  Compiler(in, p).run();
  return p;
}

}  // namespace meshscope::engine
