// One stage's tensors on one rank's device and the math of its actions: F, I (input gradient),
// W (weight gradient), the dp gradient all-reduce and the SGD step; a moe block's part of them is
// its MoeBlock's (moe_block.h). Everything is allocated once, per microbatch slot, so running an
// action allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "profiler/exec/moe_block.h"
#include "profiler/exec/rank_context.h"
#include "profiler/exec/stage_layout.h"
#include "profiler/runtime/backend.h"
#include "sim/model/weights.h"

namespace meshscope::exec {

class StageRuntime {
 public:
  StageRuntime(const StageLayout& layout, runtime::DeviceOps& dev);

  // Uploads this tp rank's shard of every linear of the stage.
  void load_weights(const std::vector<model::LinearWeights>& full);
  // Downloads the shards (blocking), shaped as model::shard() makes them.
  std::vector<model::LinearWeights> download_weights(const std::vector<model::LinearWeights>& like);

  // Stage 0: slot j's input is data + j * rows * input_dim. Last stage: targets / labels likewise.
  void bind_data(const float* inputs);
  void bind_targets(const float* targets, const int32_t* labels);
  // `prev` (stage - 1) lives on the same rank: its outputs are this stage's inputs and this
  // stage's input gradients are its output gradients, without copies.
  void link_previous(StageRuntime& prev);

  void forward(int mb, RankContext& ctx);
  void input_grad(int mb, RankContext& ctx);
  void weight_grad(int mb, RankContext& ctx);
  void zero_grads();
  void optimizer_step();

  const StageLayout& layout() const { return layout_; }
  float* grads() { return grads_.as<float>(); }
  float* input(int mb) { return slots_[mb].input; }
  float* output(int mb) { return slots_[mb].y.back(); }
  float* grad_input(int mb) { return slots_[mb].dx.front(); }
  float* grad_output(int mb) { return slots_[mb].grad_output; }
  // The buffers of the stage's schedule-level ALLTOALLs (layout().exchange_floats each).
  const float* exchange_send() const { return exchange_send_.as<float>(); }
  float* exchange_recv() { return exchange_recv_.as<float>(); }

 private:
  struct Slot {
    float* input = nullptr;
    float* grad_output = nullptr;
    const float* targets = nullptr;
    const int32_t* labels = nullptr;
    std::vector<float*> z, a, dz, dx;  // per linear (a == z, dz unused when no activation)
    std::vector<float*> y;             // per unit output (a of its last linear unless residual)
  };

  float* carve(size_t floats);
  const float* unit_input(const Slot& s, int unit) const;
  const float* linear_input(const Slot& s, int unit, int linear) const;
  float* unit_output_grad(const Slot& s, int unit) const;
  float* linear_output_grad(const Slot& s, int unit, int linear) const;
  float* pre_activation_grad(const Slot& s, int unit, int linear) const;
  void tp_all_reduce(int inner, float* data, size_t count, RankContext& ctx);

  StageLayout layout_;
  runtime::DeviceOps& dev_;
  runtime::DeviceBuffer params_;
  runtime::DeviceBuffer grads_;
  runtime::DeviceBuffer arena_;
  runtime::DeviceBuffer exchange_send_, exchange_recv_;
  size_t arena_used_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<MoeBlock>> moe_;  // per unit; null for a dense one
};

}  // namespace meshscope::exec
