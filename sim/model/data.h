// Synthetic training data from a fixed seed: a fresh batch per step whose targets come from a fixed
// random teacher, so the loss can go down (the classifier's labels are learnable).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/model/workload.h"

namespace meshscope::model {

struct Batch {
  int rows = 0;
  std::vector<float> inputs;    // rows x input_dim
  std::vector<float> targets;   // rows x output_dim (MSE workloads)
  std::vector<int32_t> labels;  // rows (cross-entropy workloads)
};

// The global batch of `step` (spec.batch rows). Deterministic in (seed, step).
//   chain:      x ~ U(-1, 1), target = 3x - 1
//   classifier: label uniform in [0, 10), x = P[label] + N(0, 1)^784 for fixed random class
//               prototypes P (10 x 784, N(0, 1/sqrt(10)) pixels): MNIST-shaped, learnable
//   mlp, moe:   x ~ N(0, 1)^h, target = tanh(x T) for a fixed teacher T (h x h) / sqrt(h)
Batch make_batch(const Workload& w, int step);

}  // namespace meshscope::model
