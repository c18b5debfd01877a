// The what-if panel's model: a configuration to predict (schedule, microbatches, dp/pp/tp,
// hardware), the predictor that turns it into a simulated Timeline, and the scaling sweep drawn
// beside it. The predictor is injected, so the panel works with any simulator front end and the
// tests can use a synthetic one.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::gui {

struct WhatIfConfig {
  std::string schedule = "1f1b";  // a generator family name ("gpipe", "1f1b", "zb-h1", ...)
  int microbatches = 8;
  int dp = 1;
  int pp = 4;
  int tp = 1;
  int virtual_stages = 2;  // interleaved only
  std::string hardware;    // a catalog name ("h100-sxm"); empty: the predictor's default
  // The workload as the executor describes it ("mlp L=8 h=256 batch=32"); empty: the
  // predictor's default model.
  std::string model;
  // Samples per microbatch, kept when microbatches or dp change (the step then processes
  // micro_batch x microbatches x dp samples); 0: derived from the model's batch.
  int64_t micro_batch = 0;
  friend bool operator==(const WhatIfConfig&, const WhatIfConfig&) = default;
};

// "1f1b dp=1 pp=4 tp=1 m=8 on h100-sxm"
std::string describe(const WhatIfConfig& c);

// Reads what a measured run says about itself (metadata "schedule", "mesh" as "dp=2 pp=4 tp=1",
// "microbatches", "model", "hardware") over `defaults`; fields it does not hold keep their
// default. The micro-batch size comes from the model's "batch=" over dp x microbatches.
WhatIfConfig config_from_metadata(const traces::Timeline& t, WhatIfConfig defaults);

// "key=value" words of a description ("mlp L=8 h=256 batch=32" -> L, h, batch); the first word
// (the kind) under the key "".
std::vector<std::pair<std::string, std::string>> description_words(const std::string& text);

struct Predictor {
  // Throws with a message for a configuration it cannot simulate.
  std::function<traces::Timeline(const WhatIfConfig&)> simulate;
  std::vector<std::string> schedules;  // choices offered in the panel
  std::vector<std::string> hardware;
  std::string default_hardware;  // used when a configuration names none
};

enum class ScalingAxis : uint8_t { kMicrobatches = 0, kPipeline = 1, kDataParallel = 2, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(ScalingAxis::kCount)>
    kScalingAxisNames = {"microbatches", "pipeline stages (pp)", "data parallel (dp)"};
constexpr std::string_view name(ScalingAxis a) { return kScalingAxisNames[static_cast<size_t>(a)]; }

// The sweep's x values: powers of two around the configuration (microbatches 1..64, pp 1..16,
// dp 1..16), always including the configuration's own value.
std::vector<int> scaling_values(ScalingAxis axis, const WhatIfConfig& c);
WhatIfConfig with_value(WhatIfConfig c, ScalingAxis axis, int value);

struct ScalingPoint {
  int x = 0;
  int64_t step_ns = 0;
  double bubble_fraction = 0;
  // Samples per second relative to x's first point: microbatches x dp per step time.
  double throughput = 0;
  std::string error;  // the predictor's message where this point could not be simulated
};

// Runs the predictor at each x value (points it rejects carry its message, the sweep goes on).
std::vector<ScalingPoint> sweep(const Predictor& p, const WhatIfConfig& c, ScalingAxis axis);

}  // namespace meshscope::gui
