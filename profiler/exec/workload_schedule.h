// A generated schedule sized from the workload it will run: the one rule behind `run`, the demo
// and the executor tests for what each transfer and gradient collective carries.
#pragma once

#include "sim/model/workload.h"
#include "sim/schedule/generators.h"

namespace meshscope::exec {

// The generator's schedule with every transfer and all-reduce sized from the workload: bytes per
// microbatch of each stage boundary (the stage's output activation), and gradient bytes per stage
// (its float32 parameters that ALLREDUCE(dp) sums: model::dp_reduced_parameters). The executor
// checks these sizes against the workload it runs. Throws std::invalid_argument on a config the
// generator refuses, a tp the workload cannot split, or a batch that does not split into dp x
// microbatches.
schedule::Schedule generate_for_workload(const schedule::GeneratorConfig& config,
                                         const model::WorkloadSpec& workload);

}  // namespace meshscope::exec
