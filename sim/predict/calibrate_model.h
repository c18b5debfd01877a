// Calibration against the workload a trace ran: when a profiled Timeline's metadata names a model
// meshscope can rebuild (the cpu backend's "mlp L=8 h=512 batch=64", "chain batch=32", ...), each
// compute span is compared with the op model's time for that stage and phase, and the fit is a
// scale on the op model (plus overhead) instead of a flat FLOP rate, so the GEMM-shape effects of
// another microbatch size or split carry over to predictions of other configurations.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/cost/hardware.h"
#include "sim/predict/config.h"
#include "traces/timeline.h"

namespace meshscope::predict {

// The configuration a trace of meshscope's executor ran, from its run descriptor (workload, mesh,
// microbatches, stages, family); nullopt when the model is not one the executor builds. Throws
// std::invalid_argument when building it would not fit this process's memory (footprint_problem:
// a trace whose meshscope_run.workload says 10^7 layers had been built until the kernel killed
// the process), naming the descriptor's key.
std::optional<PredictConfig> config_of_trace(const traces::Timeline& t,
                                             const std::string& hardware);

// cost::fit_calibration, then, for the traces whose configuration is known, per-phase
// model_scale and overhead fitted against the op model. `rebuilt` (optional) counts those traces.
// Throws std::invalid_argument for a workload past this process's memory (config_of_trace); a
// workload the model builders reject is skipped (not rebuilt).
cost::Calibration calibrate_against_model(const std::vector<const traces::Timeline*>& timelines,
                                          const cost::Hardware& hw, cost::Precision precision,
                                          int* rebuilt = nullptr);

}  // namespace meshscope::predict
