// The single-device reference: the same workload, data and steps as a run, computed full-batch on
// one device with the CPU kernels and no partitioning at all (a moe block routes its tokens in the
// run's routing groups: reference_moe.h). Parallel runs must match it.
#pragma once

#include <vector>

#include "sim/model/weights.h"
#include "sim/model/workload.h"

namespace meshscope::exec {

struct ReferenceResult {
  std::vector<double> losses;                 // per step, full-batch mean
  std::vector<model::LinearWeights> weights;  // after the last step
};

// routing_rows: the tokens of one routing group of a moe workload's blocks (capacity is per
// group): the run's microbatch on one dp replica, model::microbatch_rows(batch, dp,
// microbatches), whose groups are consecutive rows of the batch as the run's replicas and
// microbatches take them; 0: the whole batch is one group. Other workloads ignore it.
ReferenceResult run_reference(const model::WorkloadSpec& spec, int steps, int routing_rows = 0);

}  // namespace meshscope::exec
