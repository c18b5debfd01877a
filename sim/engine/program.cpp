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

int Program::rank_of_op(uint32_t g) const {
  auto it = std::upper_bound(rank_begin.begin(), rank_begin.end(), g);
  return static_cast<int>(it - rank_begin.begin()) - 1;
}

Program compile(const EngineInput& in) {
  const schedule::Schedule& s = *in.schedule;
  const mesh::Mesh mesh(s.mesh);
  const int ranks = mesh.size();
  if (static_cast<int>(s.ranks.size()) != ranks)
    throw SimulationError("schedule has " + std::to_string(s.ranks.size()) + " ranks, mesh " +
                          mesh::to_string(s.mesh) + " needs " + std::to_string(ranks));
  if (static_cast<int>(in.stages.size()) < s.num_stages)
    throw std::invalid_argument("simulate: " + std::to_string(in.stages.size()) +
                                " stage timings for " + std::to_string(s.num_stages) + " stages");
  Program p;
  p.num_ranks = ranks;
  const std::vector<int16_t> slot = stage_slots(s, &p.slots_per_rank);
  std::vector<int> owner(s.num_stages);
  for (int st = 0; st < s.num_stages; ++st)
    owner[st] = st < static_cast<int>(s.stage_owner.size()) ? s.stage_owner[st] : st % s.mesh.pp;
  const int m = std::max(1, s.num_microbatches);
  const int v = p.slots_per_rank;

  p.rank_begin.resize(ranks + 1, 0);
  for (int r = 0; r < ranks; ++r)
    p.rank_begin[r + 1] = p.rank_begin[r] + static_cast<uint32_t>(s.ranks[r].size());
  p.ops.resize(p.rank_begin[ranks]);

  // Pass 1: durations, slots, and a dense table of where each RECV sits: (rank, dir, slot, mb).
  std::vector<int32_t> recv_at(static_cast<size_t>(ranks) * 2 * v * m, -1);
  auto recv_key = [&](int rank, bool backward, int st, int mb) {
    return ((static_cast<size_t>(rank) * 2 + backward) * v + slot[st]) * m + mb;
  };
  p.send_begin.assign(ranks + 1, 0);
  p.coll_begin.assign(ranks + 1, 0);
  // Whether every tp rank runs its group's tp 0 program action for action, checked in this pass
  // while the lead's program (a few ranks back) is still in cache.
  bool tp_agree = true;
  size_t recvs = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto& acts = s.ranks[r];
    const int lead = s.mesh.tp > 1 ? mesh.peer_in_group(mesh::GroupKind::kTp, r, 0) : r;
    const auto& lead_acts = s.ranks[lead];
    if (lead != r && lead_acts.size() != acts.size()) tp_agree = false;
    const bool compare = lead != r && tp_agree;
    for (size_t i = 0; i < acts.size(); ++i) {
      const Action& a = acts[i];
      if (compare && tp_agree && !same_tp_step(a, lead_acts[i])) tp_agree = false;
      Op& op = p.ops[p.rank_begin[r] + i];
      op.kind = a.kind;
      if (a.stage < 0 || a.stage >= s.num_stages)
        throw SimulationError(where(r, i, a) + ": stage outside 0.." +
                              std::to_string(s.num_stages - 1));
      op.slot = slot[a.stage];
      op.stage = a.stage;
      const StageTiming& t = in.stages[a.stage];
      if (schedule::is_compute(a.kind) || a.kind == ActionKind::kOptimizerStep) {
        op.value = in.compute_action_ns ? in.compute_action_ns(r, a) : compute_ns(t, a.kind);
      } else if (schedule::is_p2p(a.kind)) {
        // A RECV keeps its own size (0: not given) until its SEND is matched to it and checked.
        op.value = a.bytes > 0 || !schedule::is_send(a.kind) ? a.bytes : t.p2p_bytes;
        if (a.microbatch < 0 || a.microbatch >= m)
          throw SimulationError(where(r, i, a) + ": microbatch outside 0.." +
                                std::to_string(m - 1));
        if (schedule::is_send(a.kind)) {
          ++p.send_begin[r + 1];
        } else {
          int32_t& cell =
              recv_at[recv_key(r, a.kind == ActionKind::kRecvBackward, a.stage, a.microbatch)];
          if (cell >= 0) throw SimulationError(where(r, i, a) + ": the same RECV appears twice");
          cell = static_cast<int32_t>(p.rank_begin[r] + i);
          ++recvs;
        }
      } else if (schedule::is_collective(a.kind)) {
        op.value = in.collective_ns ? in.collective_ns(r, a) : 0;
        op.peer = in.collective_tier ? in.collective_tier(r, a) : -1;
        if (op.peer >= static_cast<int>(in.links.size()))
          throw std::invalid_argument("simulate: collective_tier gave a tier outside links");
        ++p.coll_begin[r + 1];
      }
    }
  }
  for (int r = 0; r < ranks; ++r) {
    p.send_begin[r + 1] += p.send_begin[r];
    p.coll_begin[r + 1] += p.coll_begin[r];
  }
  p.sends.resize(p.send_begin[ranks]);
  p.colls.resize(p.coll_begin[ranks]);

  // Pass 2: match sends to recvs; number collective instances per (group, issue order).
  std::vector<std::vector<int32_t>> inst_of[4];  // [group kind][group id][k-th] -> instance
  std::vector<int32_t> inst_size;
  std::vector<int> group_seq;  // per rank and group kind, collectives issued so far
  group_seq.assign(static_cast<size_t>(ranks) * 4, 0);
  for (int g = 0; g < 4; ++g) inst_of[g].resize(ranks);
  std::vector<int32_t> op_instance(p.colls.size());
  size_t matched = 0;  // RECVs given their SEND
  for (int r = 0; r < ranks; ++r) {
    const auto& acts = s.ranks[r];
    uint32_t ns = p.send_begin[r], nc = p.coll_begin[r];
    const mesh::MeshCoord c = mesh.coord_of(r);
    // Forward sends write into the next pp rank's RECVs, tp ranks ahead (mesh.h rank order),
    // last touched a whole pass ago: fetch its ops while this rank's are walked.
    if (const int ahead = r + s.mesh.tp; ahead < ranks)
      for (uint32_t g = p.rank_begin[ahead]; g < p.rank_begin[ahead + 1]; g += 64 / sizeof(Op))
        __builtin_prefetch(&p.ops[g], 1);
    for (size_t i = 0; i < acts.size(); ++i) {
      const Action& a = acts[i];
      const uint32_t gi = p.rank_begin[r] + static_cast<uint32_t>(i);
      Op& op = p.ops[gi];
      if (schedule::is_send(a.kind)) {
        p.sends[ns++] = static_cast<int32_t>(gi);
        const int peer_stage = schedule::p2p_peer_stage(a);
        if (peer_stage < 0 || peer_stage >= s.num_stages)
          throw SimulationError(where(r, i, a) + ": sends past the last stage");
        // The same dp/tp position on the pp rank owning the peer stage: moving one pp step moves
        // the global rank by tp (mesh.h rank order), so no coordinate arithmetic is needed.
        const std::optional<int> peer =
            a.peer >= 0 ? std::optional<int>(a.peer)
                        : std::optional<int>(r + (owner[peer_stage] - owner[a.stage]) * s.mesh.tp);
        if (!peer || *peer < 0 || *peer >= ranks)
          throw SimulationError(where(r, i, a) + ": no rank holds the next stage");
        const int32_t recv =
            recv_at[recv_key(*peer, a.kind == ActionKind::kSendBackward, peer_stage, a.microbatch)];
        if (recv < 0)
          throw SimulationError(where(r, i, a) + ": rank " + std::to_string(*peer) +
                                " has no matching RECV");
        Op& rop = p.ops[recv];
        if (rop.aux >= 0)
          throw SimulationError(where(r, i, a) + ": its RECV on rank " + std::to_string(*peer) +
                                " is already matched to another SEND");
        const int64_t expects = rop.value;
        if (expects > 0 && a.bytes > 0 && expects != a.bytes)
          throw SimulationError(where(r, i, a) + ": sends " + std::to_string(a.bytes) +
                                " bytes, its RECV expects " + std::to_string(expects));
        rop.value = expects > 0 ? expects : in.stages[rop.stage].p2p_bytes;
        op.aux = recv;
        op.peer = *peer;
        ++matched;
        const int tier = in.tier_of ? in.tier_of(r, *peer) : 0;
        if (tier < 0 || tier >= static_cast<int>(in.links.size()) || tier > UINT8_MAX)
          throw std::invalid_argument("simulate: tier_of gave a tier outside links");
        op.tier = static_cast<uint8_t>(tier);
        rop.aux = static_cast<int32_t>(gi);
        rop.peer = r;
      } else if (schedule::is_collective(a.kind)) {
        const int gk = static_cast<int>(a.group);
        const int gid = group_id(s.mesh, a.group, c);
        const int k = group_seq[static_cast<size_t>(r) * 4 + gk]++;
        auto& list = inst_of[gk][gid];
        if (k == static_cast<int>(list.size())) {
          list.push_back(static_cast<int32_t>(p.instances.size()));
          p.instances.push_back(Instance{0, 0, op.value});
          inst_size.push_back(0);
        }
        const int32_t inst = list[k];
        Instance& I = p.instances[inst];
        op.aux = inst;
        op_instance[nc] = inst;
        ++inst_size[inst];
        I.duration_ns = std::max(I.duration_ns, op.value);
        p.colls[nc++] = static_cast<int32_t>(gi);
      }
    }
  }
  // A RECV no SEND matched: found by a scan only when there is one.
  for (size_t g = 0; matched != recvs && g < p.ops.size(); ++g) {
    const Op& op = p.ops[g];
    if (schedule::is_recv(op.kind) && op.aux < 0) {
      const int r = p.rank_of_op(static_cast<uint32_t>(g));
      const size_t i = g - p.rank_begin[r];
      throw SimulationError(where(r, i, s.ranks[r][i]) + ": no rank sends it");
    }
  }
  // Members of each instance (CSR), and a check that all members agree on what it is.
  int32_t off = 0;
  for (size_t i = 0; i < p.instances.size(); ++i) {
    p.instances[i].members_begin = p.instances[i].members_end = off;
    off += inst_size[i];
  }
  p.members.resize(off);
  for (size_t j = 0; j < p.colls.size(); ++j) {
    Instance& I = p.instances[op_instance[j]];
    p.members[I.members_end++] = p.colls[j];
  }
  for (const Instance& I : p.instances) {
    const uint32_t g0 = static_cast<uint32_t>(p.members[I.members_begin]);
    const int r0 = p.rank_of_op(g0);
    const Action& a0 = s.ranks[r0][g0 - p.rank_begin[r0]];
    const int want = mesh.extent(a0.group);
    const int have = I.members_end - I.members_begin;
    for (int32_t k = I.members_begin; k < I.members_end; ++k) {
      const uint32_t g = static_cast<uint32_t>(p.members[k]);
      const int r = p.rank_of_op(g);
      const Action& a = s.ranks[r][g - p.rank_begin[r]];
      if (a.kind != a0.kind || a.bytes != a0.bytes)
        throw SimulationError(where(r, g - p.rank_begin[r], a) + ": its group partner " +
                              where(r0, g0 - p.rank_begin[r0], a0) +
                              " runs a different collective");
    }
    if (have != want)
      throw SimulationError("deadlock: " + where(r0, g0 - p.rank_begin[r0], a0) + " waits for " +
                            std::to_string(want) + " members of its " +
                            std::string(mesh::name(a0.group)) + " group, only " +
                            std::to_string(have) + " ever issue it");
  }
  if (!tp_agree) add_tp_syncs(mesh, p);
  return p;
}

}  // namespace meshscope::engine
