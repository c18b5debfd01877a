// How far a parallel run is from the single-device reference: the one check behind `run`'s and
// the demo's "equals one device" and the executor tests.
#pragma once

#include <vector>

#include "profiler/exec/executor.h"
#include "profiler/exec/reference.h"

namespace meshscope::exec {

// max |a - b| / max |b| over a tensor: the relative error of the whole tensor (an element-wise
// ratio would blow up on weights that are near zero). Infinite when the sizes differ or either
// holds a NaN or an infinity: a diverged run is never "equal" (std::max would skip a NaN).
double relative_error(const std::vector<float>& a, const std::vector<float>& b);

// The largest relative error over every step's loss (|got - want| / |want|), every weight and
// bias tensor, and the run's replica_error (dp replicas that differ from each other); infinite
// when the run and the reference differ in steps or tensors.
double max_relative_error(const RunResult& got, const ReferenceResult& want);

// Whether the one-device run's losses and weights are all finite. When they are not, training
// diverged on one device too (a learning rate too large): there is nothing to compare a parallel
// run against, and its infinite error says nothing about the schedule.
bool finite(const ReferenceResult& reference);

}  // namespace meshscope::exec
