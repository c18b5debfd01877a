// The compiled form of a Schedule the event loop runs: flat arrays of ops with their durations,
// every SEND matched to its RECV and every collective to its instance, so the loop does no
// lookups, allocation or string work per event.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/huge_pages.h"

namespace meshscope::engine {

struct Op {
  int64_t value = 0;  // compute and collectives: duration in ns; SEND/RECV: bytes
  int32_t aux = -1;   // SEND: global index of its RECV; RECV: of its SEND; collective: instance
  int16_t stage = 0;  // Program::slot_of_stage gives its place among its rank's stages
  schedule::ActionKind kind = schedule::ActionKind::kForward;
  union {
    uint8_t tier = 0;  // SEND: the link tier to its peer (EngineInput::tier_of), priced at compile
    uint8_t state;     // every other op: the event loop's state bits (engine.cpp), 0 from compile
  };
};
static_assert(sizeof(Op) == 16,
              "an Op is a quarter of a cache line: the event loop's misses are on ops");

// A SEND in its rank's list: its op and the rank receiving it.
struct Send {
  int32_t op = 0;
  int32_t peer = 0;
};

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
  std::vector<Op, HugePageAllocator<Op>> ops;
  std::vector<Instance> instances;
  std::vector<int32_t> members;
  std::vector<int32_t> member_tiers;  // per member: the link tier it keeps busy (-1: none)
  // Per rank, its SENDs and its collectives in program order (CSR over ranks).
  std::vector<uint32_t> send_begin, coll_begin;
  std::vector<Send, HugePageAllocator<Send>> sends;
  std::vector<int32_t> colls;
  // When the tp ranks of a group run programs that differ, the k-th compute of each member is one
  // rendezvous (the tp collectives inside compute, validator.h): compute ops then carry their
  // index here in `aux`, with members as for collectives. Empty when tp = 1 or the programs agree
  // (they then keep in step without it).
  std::vector<Instance> tp_syncs;
  std::vector<int32_t> tp_sync_members;
  // Per rank: peak_activation() of its program (its computes run in program order).
  std::vector<int64_t> peak_activation_bytes;

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
