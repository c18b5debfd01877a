// The compiled form of a Schedule the event loop runs: flat arrays of ops with their durations,
// every SEND matched to its RECV and every collective to its instance, so the loop does no
// lookups, allocation or string work per event.
//
// Ranks that run the same program (dp replicas, and the tp ranks of a group when they agree) share
// one copy of its ops, `code`: at 16,384 GPUs a 1F1B schedule has 6 M actions but 16 distinct
// programs, so the ops the loop reads stay in cache. What differs per rank lives beside it, indexed
// by the global op id g (rank r's ops are [rank_begin[r], rank_begin[r + 1])): the SEND list with
// each SEND's peer, RECV and link tier, each collective's instance, and the event loop's state.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/huge_pages.h"

namespace meshscope::engine {

// What every rank running a program has in common for one of its actions.
struct Op {
  int64_t value = 0;  // compute: duration in ns; SEND/RECV: bytes; collectives: unused (Instance)
  int16_t stage = 0;  // Program::slot_of_stage gives its place among its rank's stages
  schedule::ActionKind kind = schedule::ActionKind::kForward;
};
static_assert(sizeof(Op) == 16);

// A SEND in its rank's list (program order): its op, that of the RECV it is paired with, the rank
// receiving it and the link tier between them (EngineInput::tier_of, priced at compile).
struct Send {
  uint32_t op = 0;
  uint32_t recv = 0;
  uint32_t peer : 24 = 0;  // compile() refuses meshes of more ranks
  uint32_t tier : 8 = 0;
};
static_assert(sizeof(Send) == 12);
inline constexpr int kMaxRanks = (1 << 24) - 1;

struct Instance {
  int32_t members_begin = 0;  // into Program::members (global op indices)
  int32_t members_end = 0;
  int64_t duration_ns = 0;
};

struct Program {
  int num_ranks = 0;
  int slots_per_rank = 1;
  std::vector<uint32_t> rank_begin;    // ops of rank r: [rank_begin[r], rank_begin[r + 1])
  std::vector<int16_t> slot_of_stage;  // a stage's index among the stages its rank holds
  // The distinct programs back to back; rank r's op g is code[g + code_shift[r]].
  std::vector<Op> code;
  std::vector<int64_t> code_shift;
  int programs = 0;  // distinct programs in `code`
  std::vector<Instance> instances;
  std::vector<int32_t> members;
  std::vector<int32_t> member_tiers;  // per member: the link tier it keeps busy (-1: none)
  // Per instance: the share of its members' processors it holds (EngineInput::
  // collective_sm_share); empty when every share is 0.
  std::vector<double> instance_sm_share;
  // Per instance: how it overlaps compute (EngineInput::collective_overlap), its release_ns
  // below its duration or 0; empty when no collective does.
  std::vector<CollectiveOverlap> instance_overlap;
  // Per rank, its SENDs and its collectives in program order (CSR over ranks); coll_instance[k]
  // is the instance of collective colls[k].
  std::vector<uint32_t> send_begin, coll_begin;
  std::vector<Send, HugePageAllocator<Send>> sends;
  std::vector<int32_t> colls;
  std::vector<int32_t> coll_instance;
  // When the tp ranks of a group run programs that differ, the k-th compute of each member is one
  // rendezvous (the tp collectives inside compute, validator.h): tp_sync_of[g] is a compute op's
  // rendezvous, with members as for collectives. All empty when tp = 1 or the programs agree
  // (they then keep in step without it).
  std::vector<Instance> tp_syncs;
  std::vector<int32_t> tp_sync_members;
  std::vector<int32_t> tp_sync_of;
  // Per rank: peak_activation() of its program (its computes run in program order).
  std::vector<int64_t> peak_activation_bytes;

  size_t num_ops() const { return rank_begin.empty() ? 0 : rank_begin.back(); }
  const Op& op(int rank, uint32_t g) const {
    return code[static_cast<size_t>(static_cast<int64_t>(g) + code_shift[rank])];
  }
  int rank_of_op(uint32_t g) const;  // binary search; only for error messages
};

// Throws SimulationError naming the rank and action for unmatched transfers or collectives.
Program compile(const EngineInput& input);

// Activation bytes a compute action of the stage adds when it ends: +A for F, released by B (or
// by I and W, W freeing what the weight gradient needs); nullopt for actions that hold none.
std::optional<int64_t> activation_delta(const StageTiming& t, schedule::ActionKind kind);

// The peak activation (RankStats::peak_activation_bytes) of a rank running `program`: a rank runs
// its computes one at a time in program order, so the running sum of their activation_delta, and
// its peak, do not depend on timing (known before the event loop runs).
int64_t peak_activation(const std::vector<schedule::Action>& program,
                        const std::vector<StageTiming>& stages);

}  // namespace meshscope::engine
