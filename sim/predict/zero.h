// ZeRO's collectives written into a generated schedule (Rajbhandari et al. 2020): stage 1
// reduce-scatters the gradients once a step instead of all-reducing them and all-gathers the
// updated parameters after STEP; stage 2 reduce-scatters them after each microbatch's backward
// instead, since it keeps only its shard between microbatches (docs/ACCURACY.md item 43); stage 3
// also gathers a stage's parameters before each forward and backward.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cost/collective_model.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/framework.h"
#include "sim/engine/engine.h"
#include "sim/schedule/schedule.h"

namespace meshscope::predict {

// `param_bytes[s]`: stage s's parameters held by one tp rank, in the compute precision; `dp`: the
// devices holding each parameter, the mesh's dp times cp (PredictConfig::data_parallel; a schedule
// of representatives has mesh.dp = 1 but stands for dp replicas). No change when zero == 0 or
// dp == 1.
// `shard_group` < dp (ZeRO-3 only): hybrid sharding (PyTorch FSDP's HYBRID_SHARD): the gathers and
// reduce-scatters run inside groups of shard_group ranks, and each reduce-scatter is followed by
// an all-reduce of the 1 / shard_group shard across the dp / shard_group replicas (an
// ALLREDUCE(dp) action; the simulator prices the dp actions on those subgroups).
// `once_a_step` (ZeRO-3 only; shards_once_a_step): each stage's parameters gathered before its
// first forward and its gradients reduce-scattered after its last backward, once a step, instead
// of around every microbatch. `cp`: the context-parallel devices of each dp rank, which the
// shards span too (docs/ACCURACY.md item 46): a shard group is shard_group x cp devices, and a
// hybrid all-reduce moves 1 / (shard_group x cp) of a stage.
// `grad_bytes[s]`: the same parameters' gradients as the reductions move them
// (Resolved::grad_bytes: the framework's reduction precision); the reduce-scatters after a backward
// move those, the gathers the parameters.
void apply_zero(schedule::Schedule& s, int zero, int dp, const std::vector<int64_t>& param_bytes,
                const std::vector<int64_t>& grad_bytes, int shard_group = 0,
                bool once_a_step = false, int cp = 1);

// Whether a run's ZeRO-3 gathers and reduces once a step: its framework's
// pipelined_sharding_per_step beside pipeline parallelism (docs/ACCURACY.md item 44).
bool shards_once_a_step(int zero, int dp, int pp, const cost::Framework& framework);

// ZeRO-3's collectives as the frameworks issue them: one per layer (PyTorch FSDP all-gathers and
// reduce-scatters each wrapped unit, a transformer block, on its own; DeepSpeed ZeRO-3 fetches
// module by module), so a stage's `bytes` over `layers` layers cost `layers` collectives of
// bytes / layers, each paying its own latency. `layers` 1: one collective of `bytes`.
double zero3_collective_seconds(const cost::Hardware& hw, cost::CollectiveKind kind, double bytes,
                                const cost::GroupSpan& span, int layers,
                                const cost::Calibration* calibration);

// ZeRO-3's memory passes over a stage's `parameters` (one tp rank's, unsharded) that the
// framework makes each microbatch beside its collectives (cost::Framework::gather_copy_bytes,
// reduce_copy_bytes): a gather's copy-out before F and again before the backward, the gradient's
// copy-in to the reduce buffer after it. Streaming passes at the memory rate: sharded_copies gives
// their times (0 when zero < 3 or dp == 1), add_parameter_passes adds them to F, I, W and B.
// `once_over` > 0 (shards_once_a_step): one gather and one reduction a step, spread over that
// many microbatches, and no gather before the backward (the parameters stay gathered).
struct ShardedCopies {
  int64_t gather_ns = 0;           // a gather's copy-out before F
  int64_t backward_gather_ns = 0;  // the backward's gather's copy-out (added to I and B)
  int64_t reduce_ns = 0;           // the gradient's copy-in (added to W and B)
};
ShardedCopies sharded_copies(int zero, int dp, double parameters, const cost::Framework& framework,
                             const cost::ComputeModel& compute, int once_over = 0);
// An autocast framework's weight casts over a stage's `parameters` each microbatch, at any ZeRO
// stage (cost::Framework::cast_forward_bytes, cast_backward_bytes): streaming passes at the
// memory rate, the forward's before F, the backward's with the weight gradients.
struct WeightCasts {
  int64_t forward_ns = 0;   // added to F
  int64_t backward_ns = 0;  // added to W and B
};
WeightCasts weight_casts(double parameters, const cost::Framework& framework,
                         const cost::ComputeModel& compute);
// A framework's pass adding each microbatch's weight gradients over a stage's `parameters` into
// the gradients kept across the step (cost::Framework::grad_accumulation_bytes at `precision`): a
// streaming pass at the memory rate with the weight gradients (added to W and B).
int64_t grad_accumulation_ns(double parameters, const cost::Framework& framework,
                             cost::Precision precision, const cost::ComputeModel& compute);
// Adds the sharded copies, the weight casts and the gradient accumulation to a stage's F, I, W
// and B. `once_over` > 0: the sharded copies run once a step (shards_once_a_step), spread over
// that many microbatches' F and B; the parameters stay gathered for the backward.
void add_parameter_passes(engine::StageTiming& t, int zero, int dp, double parameters,
                          cost::Precision precision, const cost::Framework& framework,
                          const cost::ComputeModel& compute, int once_over = 0);

}  // namespace meshscope::predict
