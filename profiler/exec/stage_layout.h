// The host-side description of one pipeline stage on one tp rank: its linears with local shapes,
// where each sits in the parameter buffer, its moe blocks, which tp collectives, ep all-to-alls
// and edp all-reduce it issues, and what it costs.
#pragma once

#include <cstddef>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "sim/mesh/mesh.h"
#include "sim/model/partition.h"
#include "sim/model/stage_cost.h"
#include "sim/model/workload.h"

namespace meshscope::exec {

struct LinearLayout {
  int global_index = 0;  // position among the workload's linears (model::init_weights order)
  int in = 0;            // local (this tp rank's) shapes
  int out = 0;
  int bias = 0;  // bias entries held (row split: the full out)
  model::Activation act = model::Activation::kNone;
  model::TpSplit split = model::TpSplit::kReplicated;
  bool needs_dx = true;  // false for the first linear of stage 0: no gradient for the data
  int fwd_inner = -1;    // index into the rank's InnerInfo list; -1: no tp collective
  int bwd_inner = -1;
  size_t w_offset = 0;  // floats into the stage's parameter (and gradient) buffer
  size_t b_offset = 0;
  int expert = -1;  // moe: the expert of its block this linear belongs to; -1: dense
};

// A moe block on this rank (moe_block.h): its router and the experts of its ep shard.
struct MoeUnitLayout {
  int router = 0;        // into StageLayout::linears
  int first_expert = 0;  // into StageLayout::linears: local expert l's fc1, then its fc2
  int local_experts = 0;
  int experts = 0;  // in the block, over every ep rank
  int top_k = 1;
  int capacity = 1;  // tokens per expert and routing group (model::expert_capacity of rows)
  int hidden = 0;
  int ffn = 0;
  int ep = 1;
  model::Activation act = model::Activation::kGelu;  // the experts' fc1
  // The all-to-alls over the ep group (sim/mesh/mesh.h), into the rank's InnerInfo list; -1 when
  // ep = 1.
  int dispatch_inner = -1, combine_inner = -1, combine_grad_inner = -1, dispatch_grad_inner = -1;

  int slots() const { return experts * capacity; }  // rows of a dispatch buffer
  size_t block_floats() const { return size_t(local_experts) * capacity * hidden; }  // per member
  int fc1(int local) const { return first_expert + 2 * local; }
  int fc2(int local) const { return first_expert + 2 * local + 1; }
};

struct UnitLayout {
  int first_linear = 0;  // into StageLayout::linears
  int num_linears = 0;
  bool residual = false;
  int moe = -1;  // into StageLayout::moe; -1: a dense unit
};

struct StageLayout {
  int stage = 0;
  bool first = false;  // stage 0: input is the data
  bool last = false;   // last stage: computes the loss
  int tp = 1;
  int tp_rank = 0;
  int rows = 0;  // samples per microbatch
  int microbatches = 0;
  int input_dim = 0;  // local width of the stage input and output
  int output_dim = 0;
  model::LossKind loss = model::LossKind::kMse;
  float loss_scale = 0;
  float lr = 0;
  size_t param_count = 0;
  // The leading floats of the parameter buffer whose gradients ALLREDUCE(dp) sums: every one but
  // the experts' of a run with ep > 1 (model::dp_reduced_parameters), which sit after them.
  size_t dp_reduced_count = 0;
  // The all-reduce over edp of the experts' gradients (the floats after dp_reduced_count), run by
  // ALLREDUCE(dp) before the dense one; index into the rank's InnerInfo list, -1 when the experts
  // have no replica (ep = dp) or are reduced with the dense parameters (ep = 1).
  int expert_reduce_inner = -1;
  std::vector<LinearLayout> linears;
  std::vector<UnitLayout> units;
  std::vector<MoeUnitLayout> moe;
  model::StageCost cost;
  // Floats of each of the two buffers the stage's schedule-level ALLTOALLs send from and receive
  // into (the largest of them; 0: none). Their payload is traffic the stage's math does not read.
  size_t exchange_floats = 0;

  size_t input_bytes() const { return sizeof(float) * size_t(rows) * input_dim; }
  size_t output_bytes() const { return sizeof(float) * size_t(rows) * output_dim; }
};

// Builds the layout of `range` as stage `stage` of `num_stages` for rank `rank` of mesh `m` (its
// tp rank picks the linears' shards, its ep rank a moe block's local experts), appending the tp
// collectives, ep all-to-alls and edp all-reduce it issues to `inner` (their indices land in the
// LinearLayouts, MoeUnitLayouts and expert_reduce_inner).
StageLayout make_stage_layout(const model::Workload& w, const model::StageRange& range, int stage,
                              int num_stages, const mesh::Mesh& m, int rank, int rows,
                              int microbatches, const model::StageCost& cost,
                              std::vector<capture::InnerInfo>& inner);

}  // namespace meshscope::exec
