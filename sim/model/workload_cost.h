// The StageCost of each pipeline stage of an executable workload: the ops the executor runs per
// microbatch on one tp rank, with their FLOPs, bytes and GEMM shapes, and its memory and traffic.
#pragma once

#include <vector>

#include "sim/model/partition.h"
#include "sim/model/stage_cost.h"
#include "sim/model/workload.h"

namespace meshscope::model {

// One entry per stage of `stages`, for microbatches of `microbatch_rows` samples on one of `tp`
// tensor-parallel ranks. Mirrors the executor exactly: stage 0 computes no gradient for the data
// (so no input-gradient GEMM and no tp all-reduce for its first linear), the last stage's forward
// includes the loss; activation_bytes is what the executor keeps from F to B (the stage input,
// every linear's pre-activation and activation, residual outputs, the loss gradient), and of it
// weight_grad_bytes is what W still needs after I (the input of every linear). A moe block
// (w.spec.ep experts shards) counts its router, routing, dispatch and combine, the GEMMs of its
// local experts as the executor runs them (one per expert and source rank, capacity rows each)
// and its all-to-alls over ep (dispatch and combine in F, their gradients in I) as in-stage
// collectives on the ep axis.
std::vector<StageCost> stage_costs(const Workload& w, const std::vector<StageRange>& stages, int tp,
                                   int microbatch_rows);

// The same for a run: the workload of `spec` split into `num_stages` balanced stages, on a mesh
// whose tp splits the linears and whose dp and `microbatches` split the global batch. What a
// caller feeds the schedule generators (output_bytes per stage as activation bytes,
// parameters * 4 as gradient bytes) and the simulator. Throws std::invalid_argument naming the
// problem (batch not divisible, more stages than layers, tp not dividing a split).
// The parameters of a stage whose gradients the dp all-reduce carries: all of them, except the
// experts of a run with ep > 1 (each expert then lives on the dp / ep ranks of its edp group, which
// reduce it among themselves). The executor's ALLREDUCE(dp) and the schedules sized for it use
// this.
int64_t dp_reduced_parameters(const StageCost& c, int ep);

std::vector<StageCost> workload_stage_costs(const WorkloadSpec& spec, int dp, int tp,
                                            int num_stages, int microbatches);

}  // namespace meshscope::model
