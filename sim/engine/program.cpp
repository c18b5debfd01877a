// Compiling a Schedule for the event loop: durations, send/recv matching, collective instances.
#include "sim/engine/program.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

}  // namespace

int64_t action_ns(const StageTiming& t, ActionKind k) {
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

namespace {

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
      if (schedule::is_compute(p.op(r, g).kind)) by_member[r].push_back(static_cast<int32_t>(g));
  p.tp_sync_of.assign(p.num_ops(), -1);
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
        p.tp_sync_of[g] = static_cast<int32_t>(p.tp_syncs.size());
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

// An error of pairing a SEND with its RECV. Pairing runs after every rank's actions are read, so
// its errors are kept and the one of the first SEND in (rank, action) order is thrown, after any
// error of an action itself (stage or microbatch out of range, a RECV twice), which is thrown at
// once.
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

// Whether two actions are equal, peers aside: compared as words, the fields in their places and
// the padding between them masked out (a rank's whole program is compared with its replica's,
// 6 M actions at 16,384 GPUs, so this loop reads more memory than any other in compile).
static_assert(sizeof(Action) == 32 && offsetof(Action, kind) == 0 && offsetof(Action, group) == 1 &&
              offsetof(Action, stage) == 4 && offsetof(Action, microbatch) == 8 &&
              offsetof(Action, peer) == 12 && offsetof(Action, bytes) == 16 &&
              offsetof(Action, overlap_next) == 24);
bool same_but_peer(const Action& u, const Action& v) {
  uint64_t x[4], y[4];
  std::memcpy(x, &u, sizeof x);
  std::memcpy(y, &v, sizeof y);
  constexpr uint64_t kKindGroupStage = 0xFFFFFFFF0000FFFFull;  // bytes 2-3: padding
  constexpr uint64_t kMicrobatch = 0x00000000FFFFFFFFull;      // bytes 12-15 (peer) apart
  return ((x[0] ^ y[0]) & kKindGroupStage) == 0 && ((x[1] ^ y[1]) & kMicrobatch) == 0 &&
         x[2] == y[2] && ((x[3] ^ y[3]) & 0xFF) == 0;
}

// True when rank a's actions (`x`) and rank b's (`y`) are the same program: equal action for
// action, peers either not given on both or given at the same offset from the rank (the same
// mesh position one replica over). The same absolute peer is not the same program: a shared
// program keeps its SENDs' peers as offsets, so rank a would send elsewhere than it says.
bool same_program(int a, const std::vector<Action>& x, int b, const std::vector<Action>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    const Action& u = x[i];
    const Action& v = y[i];
    if (!same_but_peer(u, v)) return false;
    if ((u.peer < 0) != (v.peer < 0) || (u.peer >= 0 && u.peer - a != v.peer - b)) return false;
  }
  return true;
}

// The compile pass. Reads every rank's actions once, in rank order: a rank whose program equals
// that of a rank read before (its dp replica at dp 0, or its tp group's lead) shares that rank's
// ops, others get their own. Then pairs every rank's SENDs with their RECVs and builds the
// collective instances.
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
    p_.code_shift.resize(ranks);
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
    block_of_.assign(ranks, -1);
    for (int r = 0; r < ranks; ++r) read_rank(r);
    p_.coll_begin[ranks] = static_cast<uint32_t>(p_.colls.size());
    p_.programs = static_cast<int>(blocks_.size());
    pair_sends();
    error_.throw_if_any();
    if (matched_ != recvs_) report_unmatched_recv();
    for (const Block& b : blocks_) {
      for (const uint32_t j : b.recvs) {  // a RECV's size: its own, else its stage's
        Op& op = p_.code[b.begin + j];
        if (op.value <= 0) op.value = in_.stages[op.stage].p2p_bytes;
      }
    }
    build_instances();
    if (std::all_of(p_.instance_sm_share.begin(), p_.instance_sm_share.end(),
                    [](double v) { return v == 0; }))
      p_.instance_sm_share.clear();
    for (size_t i = 0; i < p_.instance_overlap.size(); ++i) {  // no release at or past its end
      int64_t& release = p_.instance_overlap[i].release_ns;
      if (release >= p_.instances[i].duration_ns) release = 0;
    }
    if (std::all_of(p_.instance_overlap.begin(), p_.instance_overlap.end(),
                    [](const CollectiveOverlap& e) { return e.lead_ns == 0 && e.release_ns == 0; }))
      p_.instance_overlap.clear();
    if (!tp_agree_) add_tp_syncs(mesh_, p_);
  }

 private:
  // A SEND of a program: where its RECV is, relative to the rank running it.
  struct SendSpec {
    uint32_t local = 0;  // its index in the program
    int32_t delta = 0;   // peer rank - rank
    int32_t cell = -1;   // its RECV's cell in the peer's Block::recv_at; -1: no stage past it
    int64_t bytes = 0;   // as the action gives them (0: not given)
  };

  // One distinct program, compiled from the actions of its owner (the first rank running it).
  struct Block {
    int owner = 0;
    uint32_t begin = 0;            // in Program::code
    int64_t peak_activation = 0;   // peak_activation() of the program
    std::vector<int32_t> recv_at;  // (dir, slot, mb) cell -> local index of its RECV, -1: none
    std::vector<uint32_t> recvs;   // local indices of its RECVs, in program order
    std::vector<SendSpec> sends;   // in program order
    std::vector<uint32_t> colls;   // local indices of its collectives, in program order
  };

  int cell(bool backward, int stage, int mb) const {
    return (static_cast<int>(backward) * p_.slots_per_rank + p_.slot_of_stage[stage]) * m_ + mb;
  }

  void read_rank(int r) {
    const auto& acts = s_.ranks[r];
    rank_coord_ = mesh_.coord_of(r);
    p_.coll_begin[r] = static_cast<uint32_t>(p_.colls.size());
    int b = shared_block(r);
    if (b >= 0) {
      for (const uint32_t i : blocks_[b].colls) read_collective(r, acts[i], p_.rank_begin[r] + i);
    } else {
      b = compile_block(r);
    }
    block_of_[r] = b;
    const Block& blk = blocks_[b];
    p_.code_shift[r] = static_cast<int64_t>(blk.begin) - static_cast<int64_t>(p_.rank_begin[r]);
    p_.peak_activation_bytes[r] = blk.peak_activation;
    recvs_ += blk.recvs.size();
    // Whether every tp rank runs its group's tp 0 program action for action.
    const int lead = s_.mesh.tp > 1 ? mesh_.peer_in_group(mesh::GroupKind::kTp, r, 0) : r;
    if (tp_agree_ && lead != r && block_of_[lead] != b) {
      const auto& lead_acts = s_.ranks[lead];
      if (lead_acts.size() != acts.size()) tp_agree_ = false;
      for (size_t i = 0; tp_agree_ && i < acts.size(); ++i)
        if (!same_tp_step(acts[i], lead_acts[i])) tp_agree_ = false;
    }
  }

  // The program of a rank read before that rank r runs too: that of its replica at dp 0, or of
  // its tp group's lead there. -1: none (or durations given per rank, which no rank shares).
  int shared_block(int r) const {
    if (in_.compute_action_ns) return -1;
    const int candidates[2] = {mesh_.rank_of({0, rank_coord_.pp, 0}),
                               mesh_.rank_of({0, rank_coord_.pp, rank_coord_.tp})};
    int tried = -1;
    for (const int c : candidates) {
      if (c >= r || block_of_[c] == tried) continue;
      tried = block_of_[c];
      const int owner = blocks_[tried].owner;
      if (same_program(r, s_.ranks[r], owner, s_.ranks[owner])) return tried;
    }
    return -1;
  }

  // Compiles rank r's actions into a new program; throws for an action that is wrong in itself.
  int compile_block(int r) {
    const auto& acts = s_.ranks[r];
    Block blk;
    blk.owner = r;
    blk.begin = static_cast<uint32_t>(p_.code.size());
    blk.recv_at.assign(static_cast<size_t>(2) * p_.slots_per_rank * m_, -1);
    int64_t held = 0, peak = 0;  // activation bytes
    for (size_t i = 0; i < acts.size(); ++i) {
      const Action& a = acts[i];
      if (a.stage < 0 || a.stage >= s_.num_stages)
        throw SimulationError(where(r, i, a) + ": stage outside 0.." +
                              std::to_string(s_.num_stages - 1));
      Op& op = p_.code.emplace_back();
      op.kind = a.kind;
      op.stage = static_cast<int16_t>(a.stage);
      const StageTiming& t = in_.stages[a.stage];
      if (schedule::is_compute(a.kind) || a.kind == ActionKind::kOptimizerStep) {
        op.value = in_.compute_action_ns ? in_.compute_action_ns(r, a) : action_ns(t, a.kind);
        if (a.kind != ActionKind::kOptimizerStep) {
          held +=
              deltas_[static_cast<size_t>(a.stage) * kHoldingKinds + static_cast<size_t>(a.kind)];
          peak = std::max(peak, held);
        }
      } else if (schedule::is_p2p(a.kind)) {
        // A RECV keeps its own size (0: not given) until every SEND is paired and checked.
        op.value = a.bytes > 0 || !schedule::is_send(a.kind) ? a.bytes : t.p2p_bytes;
        if (a.microbatch < 0 || a.microbatch >= m_)
          throw SimulationError(where(r, i, a) + ": microbatch outside 0.." +
                                std::to_string(m_ - 1));
        if (schedule::is_send(a.kind)) {
          SendSpec spec{static_cast<uint32_t>(i), 0, -1, a.bytes};
          const int peer_stage = schedule::p2p_peer_stage(a);
          if (peer_stage >= 0 && peer_stage < s_.num_stages) {
            spec.cell = cell(a.kind == ActionKind::kSendBackward, peer_stage, a.microbatch);
            spec.delta = peer_of(r, a, peer_stage) - r;
          }
          blk.sends.push_back(spec);
        } else {
          int32_t& at =
              blk.recv_at[cell(a.kind == ActionKind::kRecvBackward, a.stage, a.microbatch)];
          if (at >= 0) throw SimulationError(where(r, i, a) + ": the same RECV appears twice");
          at = static_cast<int32_t>(i);
          blk.recvs.push_back(static_cast<uint32_t>(i));
        }
      } else if (schedule::is_collective(a.kind)) {
        blk.colls.push_back(static_cast<uint32_t>(i));
        read_collective(r, a, p_.rank_begin[r] + static_cast<uint32_t>(i));
      }
    }
    blk.peak_activation = peak;
    blocks_.push_back(std::move(blk));
    return static_cast<int>(blocks_.size()) - 1;
  }

  // The rank receiving SEND `a` of rank r: the same dp/tp position on the pp rank owning the peer
  // stage; moving one pp step moves the global rank by tp (mesh.h rank order), so no coordinate
  // arithmetic is needed.
  int peer_of(int r, const Action& a, int peer_stage) const {
    return a.peer >= 0 ? a.peer : r + (owner_[peer_stage] - owner_[a.stage]) * s_.mesh.tp;
  }

  bool matched(uint32_t g) const { return (matched_bits_[g / 64] >> (g % 64)) & 1; }

  // Every rank's SENDs, in rank and program order, each paired with the RECV of its peer.
  void pair_sends() {
    const int ranks = p_.num_ranks;
    matched_bits_.assign((p_.num_ops() + 63) / 64, 0);
    size_t sends = 0;
    for (int r = 0; r < ranks; ++r) sends += blocks_[block_of_[r]].sends.size();
    p_.sends.reserve(sends);
    for (int r = 0; r < ranks; ++r) {
      p_.send_begin[r] = static_cast<uint32_t>(p_.sends.size());
      tiers_seen_ = 0;
      for (const SendSpec& spec : blocks_[block_of_[r]].sends) pair(r, spec);
    }
    p_.send_begin[ranks] = static_cast<uint32_t>(p_.sends.size());
  }

  // Why a SEND could not be paired (unpaired() words it).
  enum class Unpaired { kPastLastStage, kNoRank, kNoRecv, kMatched, kBytes, kTier };

  void pair(int r, const SendSpec& spec) {
    Send& send = p_.sends.emplace_back();
    send.op = p_.rank_begin[r] + spec.local;
    if (spec.cell < 0) return unpaired(r, spec, Unpaired::kPastLastStage);
    const int peer = r + spec.delta;
    if (peer < 0 || peer >= p_.num_ranks) return unpaired(r, spec, Unpaired::kNoRank);
    const Block& to = blocks_[block_of_[peer]];
    const int32_t j = to.recv_at[spec.cell];
    if (j < 0) return unpaired(r, spec, Unpaired::kNoRecv, peer);
    const uint32_t recv = p_.rank_begin[peer] + static_cast<uint32_t>(j);
    if (matched(recv)) return unpaired(r, spec, Unpaired::kMatched, peer);
    const int64_t expects = p_.code[to.begin + static_cast<uint32_t>(j)].value;
    if (expects > 0 && spec.bytes > 0 && expects != spec.bytes)
      return unpaired(r, spec, Unpaired::kBytes, peer, expects);
    const int tier = tier_between(r, peer);
    if (tier < 0 || tier >= static_cast<int>(in_.links.size()) || tier > UINT8_MAX)
      return unpaired(r, spec, Unpaired::kTier);
    matched_bits_[recv / 64] |= uint64_t{1} << (recv % 64);
    ++matched_;
    send.peer = static_cast<uint32_t>(peer);
    send.recv = recv;
    send.tier = static_cast<uint8_t>(tier);
  }

  // Keeps the error of a SEND pair() could not pair. Out of line: pair() runs for every SEND of
  // every rank (2 M at 16,384 GPUs), and building messages there slowed each of them.
  [[gnu::cold, gnu::noinline]] void unpaired(int r, const SendSpec& spec, Unpaired why,
                                             int peer = -1, int64_t expects = 0) {
    const size_t i = spec.local;
    switch (why) {
      case Unpaired::kPastLastStage:
        return error_.keep(r, i, where_is(r, i) + ": sends past the last stage");
      case Unpaired::kNoRank:
        return error_.keep(r, i, where_is(r, i) + ": no rank holds the next stage");
      case Unpaired::kNoRecv:
        return error_.keep(
            r, i, where_is(r, i) + ": rank " + std::to_string(peer) + " has no matching RECV");
      case Unpaired::kMatched:
        return error_.keep(r, i,
                           where_is(r, i) + ": its RECV on rank " + std::to_string(peer) +
                               " is already matched to another SEND");
      case Unpaired::kBytes:
        return error_.keep(r, i,
                           where_is(r, i) + ": sends " + std::to_string(spec.bytes) +
                               " bytes, its RECV expects " + std::to_string(expects));
      case Unpaired::kTier:
        return error_.keep(r, i, "simulate: tier_of gave a tier outside links", true);
    }
  }

  std::string where_is(int r, size_t i) const { return where(r, i, s_.ranks[r][i]); }

  // A RECV no SEND matched: the first in (rank, action) order.
  void report_unmatched_recv() const {
    for (int r = 0; r < p_.num_ranks; ++r)
      for (const uint32_t j : blocks_[block_of_[r]].recvs)
        if (!matched(p_.rank_begin[r] + j))
          throw SimulationError(where_is(r, j) + ": no rank sends it");
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
    const int64_t duration = in_.collective_ns ? in_.collective_ns(r, a) : 0;
    const int tier = in_.collective_tier ? in_.collective_tier(r, a) : -1;
    if (tier >= static_cast<int>(in_.links.size()))
      throw std::invalid_argument("simulate: collective_tier gave a tier outside links");
    const double share = in_.collective_sm_share ? in_.collective_sm_share(r, a) : 0;
    if (!(share >= 0 && share < 1))
      throw std::invalid_argument("simulate: collective_sm_share gave " + std::to_string(share) +
                                  ", outside [0, 1)");
    CollectiveOverlap early;
    if (in_.collective_overlap) {
      early = in_.collective_overlap(r, a);
      if (early.lead_ns < 0 || early.tail_ns < 0 || early.release_ns < 0 ||
          !(early.charge_share >= 0 && early.charge_share < 1))
        throw std::invalid_argument(
            "simulate: collective_overlap gave a negative lead, tail or release, or a share "
            "outside [0, 1)");
      if ((early.lead_ns > 0) + (early.release_ns > 0) + (early.hide_layers > 0) > 1 ||
          early.hide_layers < 0)
        throw std::invalid_argument(
            "simulate: collective_overlap gave more than one of a lead (a reduction's), a "
            "release and hide_layers (a gather's), or negative hide_layers");
      if (early.hide_layers > 0)
        early.release_ns = release_behind_use(r, gi - p_.rank_begin[r], a, duration, early);
    }
    coll_tiers_.push_back(tier);
    const int gk = static_cast<int>(a.group);
    const int gid = group_id(s_.mesh, a.group, rank_coord_);
    const int k = group_seq_[static_cast<size_t>(r) * kGroupKinds + gk]++;
    auto& list = inst_of_[gk][gid];
    if (k == static_cast<int>(list.size())) {
      list.push_back(static_cast<int32_t>(p_.instances.size()));
      p_.instances.push_back(Instance{0, 0, duration});
      inst_size_.push_back(0);
      if (in_.collective_sm_share) p_.instance_sm_share.push_back(0);
      if (in_.collective_overlap) p_.instance_overlap.push_back({});
    }
    const int32_t inst = list[k];
    Instance& I = p_.instances[inst];
    if (share > 0) p_.instance_sm_share[inst] = std::max(p_.instance_sm_share[inst], share);
    p_.coll_instance.push_back(inst);
    ++inst_size_[inst];
    I.duration_ns = std::max(I.duration_ns, duration);
    if (in_.collective_overlap) {  // members priced alike; the most any one allows
      CollectiveOverlap& e = p_.instance_overlap[inst];
      e.lead_ns = std::max(e.lead_ns, early.lead_ns);
      e.tail_ns = std::max(e.tail_ns, early.tail_ns);
      e.charge_share = std::max(e.charge_share, early.charge_share);
      e.release_ns = std::max(e.release_ns, early.release_ns);
    }
    p_.colls.push_back(static_cast<int32_t>(gi));
  }

  // A gather's release where it hides behind the compute that uses it (CollectiveOverlap::
  // hide_layers): that compute is the first of its stage after it in rank r's program (action i);
  // none: 0, the gather is waited for whole.
  int64_t release_behind_use(int r, uint32_t i, const Action& a, int64_t duration,
                             const CollectiveOverlap& o) const {
    const std::vector<Action>& acts = s_.ranks[r];
    for (size_t k = i + 1; k < acts.size(); ++k) {
      const Action& next = acts[k];
      if (!schedule::is_compute(next.kind) || next.stage != a.stage) continue;
      const int64_t window = in_.compute_action_ns ? in_.compute_action_ns(r, next)
                                                   : action_ns(in_.stages[next.stage], next.kind);
      const int64_t exposed =
          std::min(duration, std::max(duration / o.hide_layers, duration - window));
      return exposed + std::llround(o.charge_share * static_cast<double>(duration - exposed));
    }
    return 0;
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
      Instance& I = p_.instances[p_.coll_instance[j]];
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
  std::vector<Block> blocks_;
  std::vector<int32_t> block_of_;       // per rank: the program it runs
  std::vector<uint64_t> matched_bits_;  // per global op: a RECV some SEND is paired with
  size_t recvs_ = 0, matched_ = 0;
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
  std::vector<int32_t> coll_tiers_;     // per collective in Program::colls order: the tier it holds
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
  if (ranks > kMaxRanks)
    throw std::invalid_argument("simulate: more than " + std::to_string(kMaxRanks) + " ranks");
  if (s.num_stages > INT16_MAX)
    throw std::invalid_argument("simulate: more than " + std::to_string(INT16_MAX) + " stages");
  Program p;
  Compiler(in, p).run();
  return p;
}

}  // namespace meshscope::engine
