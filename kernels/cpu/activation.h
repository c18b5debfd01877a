// The activation functions of a linear layer: one enum for the workloads that name them
// (sim/model) and the kernels that compute them (kernels/cpu, kernels/cuda).
#pragma once

#include <cstdint>

namespace meshscope::kernels {

enum class Activation : uint8_t { kNone = 0, kRelu = 1, kGelu = 2 };  // GELU: tanh approximation

}  // namespace meshscope::kernels
