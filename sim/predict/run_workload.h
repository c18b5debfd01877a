// A prediction's model as the Timeline's typed workload (traces::WorkloadDescriptor) and back:
// the simulator describes what it predicted, and a measured run's descriptor becomes the
// configuration the what-if panel predicts, with no description text in between.
#pragma once

#include "sim/predict/config.h"
#include "traces/run_descriptor.h"

namespace meshscope::predict {

// The model kind and sizes of `c`, and its global batch.
traces::WorkloadDescriptor workload_descriptor(const PredictConfig& c);

// Sets c's model kind and sizes from `w` (sizes `w` leaves at 0 keep c's); the executor's
// workloads (mlp, chain, classifier, moe) train with SGD, so they get it. Throws
// std::invalid_argument for a kind the simulator has no model of (kUnknown).
void apply_workload(const traces::WorkloadDescriptor& w, PredictConfig& c);

}  // namespace meshscope::predict
