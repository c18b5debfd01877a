// The single-device reference of one mixture-of-experts block (reference.cpp's moe units): plain
// host loops over the kernels/cpu ops, routing group after routing group, every expert local.
#pragma once

#include <vector>

#include "sim/model/weights.h"
#include "sim/model/workload.h"

namespace meshscope::exec {

// What a moe block's forward keeps for its backward, for every routing group of the batch.
struct MoeTape {
  std::vector<float> x;      // input, rows x h
  std::vector<float> probs;  // rows x experts
  std::vector<int32_t> dest;
  std::vector<float> gate;                 // rows x k each
  std::vector<float> inputs, pre, hidden;  // per group: experts x capacity rows of h, 4h, 4h
  std::vector<float> outputs;              // per group: experts x capacity rows of h
};

// y = x + the block's experts (rows x h) over routing groups of `group_rows` consecutive rows;
// `params` are the unit's linears (router, then fc1, fc2 of every expert), model::init_weights'
// shapes.
void moe_forward(const model::Workload& w, const model::Unit& unit,
                 const model::LinearWeights* params, int rows, int group_rows,
                 const std::vector<float>& x, std::vector<float>& y, MoeTape& tape);

// dx (rows x h) from dy; the unit's parameter gradients are added into `grads` (same layout as
// params, zeroed by the caller).
void moe_backward(const model::Workload& w, const model::Unit& unit,
                  const model::LinearWeights* params, int rows, int group_rows, const MoeTape& tape,
                  const std::vector<float>& dy, std::vector<float>& dx,
                  model::LinearWeights* grads);

}  // namespace meshscope::exec
