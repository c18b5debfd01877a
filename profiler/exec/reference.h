// The single-device reference: the same workload, data and steps as a run, computed full-batch on
// one device with the CPU kernels and no partitioning at all. Parallel runs must match it.
#pragma once

#include <vector>

#include "sim/model/weights.h"
#include "sim/model/workload.h"

namespace meshscope::exec {

struct ReferenceResult {
  std::vector<double> losses;                 // per step, full-batch mean
  std::vector<model::LinearWeights> weights;  // after the last step
};

ReferenceResult run_reference(const model::WorkloadSpec& spec, int steps);

}  // namespace meshscope::exec
