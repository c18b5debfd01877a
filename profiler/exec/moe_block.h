// One mixture-of-experts block of a stage on one rank, executed with expert parallelism:
//   F: router linear, softmax, top-k with capacity (kernels/cpu/ops.h, top_k_route), dispatch of
//      the kept tokens into an experts x capacity buffer, an all-to-all over the ep group that
//      brings every expert the tokens of every member, the local experts' FFNs, an all-to-all that
//      takes the outputs back, the gate-weighted combine and the residual;
//   I: the backward of the combine (gradients of the expert outputs and of the gates), the
//      all-to-all to the experts, their input gradients, the all-to-all back, the backward of the
//      dispatch, the router's backward through the gates and the softmax;
//   W: the router's and the local experts' weight gradients, from what F and I kept.
// The ep group is ep consecutive dp replicas (sim/mesh/mesh.h; ep = 1: every rank holds every
// expert and nothing is exchanged); each expert is replicated over the dp / ep ranks of its edp
// group, whose gradients ALLREDUCE(dp) sums over edp (rank_plan.h, stage_layout.h). Routing groups
// are the microbatch of one replica: capacity is model::expert_capacity of the stage's rows, and
// the single-device reference routes the same groups (reference_moe.h). The all-to-alls are the
// rank's InnerInfos, traced as collectives (all_to_all over ep) inside their F or I span, as
// Megatron-LM's token dispatcher runs them inside the MoE layer's forward and backward.
#pragma once

#include <vector>

#include "profiler/exec/rank_context.h"
#include "profiler/exec/stage_layout.h"
#include "profiler/runtime/device_ops.h"

namespace meshscope::exec {

class MoeBlock {
 public:
  MoeBlock(const StageLayout& stage, const MoeUnitLayout& unit, runtime::DeviceOps& dev);

  // x: the block's input of microbatch mb (rows x h, kept by the stage until W); y: its output.
  void forward(int mb, const float* x, float* y, const float* params, RankContext& ctx);
  // dy: gradient of the output; dx: of the input (written whole).
  void input_grad(int mb, const float* dy, float* dx, const float* params, RankContext& ctx);
  // Adds the router's and the local experts' gradients of microbatch mb into `grads`.
  void weight_grad(int mb, const float* x, float* grads);

 private:
  struct Slot {
    float *probs, *gate, *inputs, *pre, *hidden, *outputs, *combined, *d_outputs, *d_pre, *d_logits;
    int32_t* dest;
  };
  // Rows of expert-side block (source member, local expert), capacity rows each, in the layout
  // all_to_all delivers: member-major.
  size_t block_row(int member, int local) const;
  // An all-to-all of one block per member (layout's block_floats), or nothing with ep = 1.
  void exchange(int inner, const float* send, float* recv, RankContext& ctx);

  int rows_ = 0;                       // tokens of a routing group: the stage's microbatch
  std::vector<LinearLayout> linears_;  // the stage's, for parameter offsets
  MoeUnitLayout m_;
  runtime::DeviceOps& dev_;
  runtime::DeviceBuffer arena_, dest_arena_, scratch_;
  std::vector<Slot> slots_;
  float *send_ = nullptr, *recv_ = nullptr, *d_gate_ = nullptr;  // transient, in scratch_
};

}  // namespace meshscope::exec
