// Where a simulated step's time goes on one device: its compute stream's time split into the
// terms the cost model sums (GEMMs, attention, norms, elementwise passes, the loss, recomputation,
// exposed tensor-parallel collectives, ZeRO-3's copies, the optimizer step), and the rest of the
// step, in which it waits (pipeline bubble, data-parallel collectives not hidden or the compute
// that hidden ones slow through the SMs they hold, transfers).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/engine.h"
#include "sim/schedule/action.h"

namespace meshscope::predict {

struct Resolved;

enum class Term : uint8_t {
  kGemm = 0,          // model::OpKind::kGemm, outside recomputation
  kElementwise,       // kElementwise: bias, activation, residual, rope, unfused softmax, dropout
  kNorm,              // kNorm
  kAttention,         // kAttention: the fused attention core, forward and backward
  kLoss,              // kLoss
  kConv,              // kConv
  kRecompute,         // ops run again before the backward (activation checkpointing)
  kTpCommunication,   // in-stage (tp, cp, ep) collectives the compute stream waits for
  kShardedCopies,     // ZeRO-3's copies of gathered parameters and reduced gradients
  kWeightCasts,       // an autocast framework's casts of fp32 weights and their gradients
  kFp8Casts,          // Transformer Engine's casts and transposes into FP8 (options.fp8)
  kGradAccumulation,  // a pass adding each microbatch's weight gradients to the kept ones
  kOptimizerStep,     // STEP: the update, clipping and whatever the framework's step moves
  kCount
};
const char* name(Term t);  // "gemm", "tp_communication", ...

struct TermSeconds {
  std::array<double, static_cast<size_t>(Term::kCount)> seconds{};
  double& operator[](Term t) { return seconds[static_cast<size_t>(t)]; }
  double operator[](Term t) const { return seconds[static_cast<size_t>(t)]; }
  double total() const;
};

struct Breakdown {
  // false: the engine did not run (the configuration does not fit) or the caller did not ask
  // (SimulateOptions::breakdown; the search does not)
  bool known = false;
  int pp = 0;  // the device broken down: (dp 0, pp, tp 0), the busiest compute stream
  double step_s = 0;
  TermSeconds busy;  // over its program's compute actions
  // Its compute time the SMs of collectives the engine runs beside it added (the hidden part of a
  // dp reduction's its charge_share, engine::CollectiveOverlap), and those of pipeline transfers
  // and receives posted ahead (engine::RankStats::sm_held_ns; JSON "collectives_sm_held_s", named
  // before the latter).
  double sm_held_s = 0;
  // Its compute time beyond the terms and sm_held_s: calibrated phases, shared cores.
  double other_s = 0;
  double idle_s = 0;           // the step minus its compute time
  double communication_s = 0;  // its transfers and collectives, on their own streams
  // Its data-parallel collectives (gradient reductions, ZeRO's gathers): their time on the links,
  // the part of it outside the compute they hide behind, and what the step is charged for them:
  // that part plus the compute the hidden rest slows through the SMs it holds (resolved.h,
  // CollectivePrice), each as if its stream were free when its compute began: reductions queued
  // behind each other hide less (engine::CollectiveOverlap), which the step and idle_s show and
  // these do not. Without overlap all three are equal; without dp collectives all are 0.
  double dp_collectives_wire_s = 0;
  double dp_collectives_exposed_s = 0;
  double dp_collectives_charged_s = 0;
};

// The terms of one action of stage `stage` (F, B, I, W or STEP), as stage_timing and the ZeRO-3
// copies price it; zero for the other kinds.
TermSeconds action_terms(const Resolved& r, int stage, schedule::ActionKind kind);

// Sums action_terms over `program` (the program of pp coordinate `pp`) and sets the rest from the
// device's engine statistics and the step time.
Breakdown breakdown(const Resolved& r, int pp, const std::vector<schedule::Action>& program,
                    const engine::RankStats& stats, int64_t step_ns);

nlohmann::json to_json(const Breakdown& b);

}  // namespace meshscope::predict
