// How much a prediction leans on each figure of its hardware catalog entry and of its framework
// profile: the step simulated again with one figure moved down and up by a fraction, every other
// figure held. A user reads which figures decide the prediction, and whether those rest on a
// source or on an assumption (the file's own `sources` say which): `meshscope predict
// --sensitivity`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/predict/config.h"
#include "sim/predict/simulate.h"

namespace meshscope::predict {

struct FigureSensitivity {
  // Dotted key of the catalog entry ("efficiency.gemm_max", "inter_node.latency_ns") or of the
  // profile ("elementwise_passes.norm", "loss_bytes.forward").
  std::string figure;
  double value = 0;  // the entry's value
  // The values simulated: value x (1 - fraction) and x (1 + fraction); a catalog's fraction of a
  // peak rate or of a link's bandwidth is capped at 1, a count rounded (at least 1 apart).
  double low_value = 0, high_value = 0;
  double step_time_s_at_low_value = 0,
         step_time_s_at_high_value = 0;  // with low_value, with high_value
  // What the file's `sources` say of the figure (cost::source_clause; empty: nothing), and whether
  // that calls it an assumption ("assumption", "assumed").
  std::string source;
  bool assumption = false;
  // The config key that sets this figure for the run in the file's place ("cluster.network_gbps"
  // for inter_node.bandwidth_bytes_per_s), so moving the file's moves nothing; empty when none.
  std::string overridden_by;
  // The larger of the two changes, relative to the step time of the entry as it is.
  double largest_change(double step_time_s) const;
};

struct Sensitivity {
  std::string hardware;   // catalog name of the entry varied
  std::string framework;  // name of the profile varied
  double fraction = 0;    // each figure moved by +-fraction of itself
  double step_time_s = 0;
  bool fits = true;  // the configuration fits in the device's memory (its step time regardless)
  // Every figure the entry sets (zero means "none" in a catalog: those are not varied), the
  // largest change first.
  std::vector<FigureSensitivity> figures;
  // Every number of the profile that prices work and is not zero (an attention_forward_speedup of
  // 1, one rate for both directions, is not varied either), the largest change first. A number the
  // profile file does not set is the code's default (cost::Framework), and no source names it.
  std::vector<FigureSensitivity> profile_figures;
};

// The catalog figures varied, as dotted keys (docs/CONFIG.md's "Hardware files" names them).
std::vector<std::string> sensitivity_figures();

// Simulates `config` once as it is and twice per figure of the entry and of the profile. `fraction`
// in (0, 1). Throws std::invalid_argument with a calibration in `options` (its fitted rates replace
// the catalog's figures, so moving those would change nothing), and what simulate() throws.
// `done(i, n)` after each simulation when given.
Sensitivity sensitivity(const PredictConfig& config, double fraction,
                        const SimulateOptions& options = {},
                        const std::function<void(size_t, size_t)>& done = {});

nlohmann::json to_json(const Sensitivity& s);

}  // namespace meshscope::predict
