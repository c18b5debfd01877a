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
  // The workload the run trained (kind and sizes); kind kUnknown: the predictor's default model.
  traces::WorkloadDescriptor workload;
  // Samples per microbatch, kept when microbatches or dp change (the step then processes
  // micro_batch x microbatches x dp samples); 0: derived from the model's batch.
  int64_t micro_batch = 0;
  // The number format the run computed in, as the hardware catalog names it ("fp32"); empty: the
  // predictor's default (bf16, a training job's). meshscope's cpu backend computes in fp32.
  std::string precision;
  // A simulated run's configuration as `meshscope simulate` recorded it (the trace's metadata
  // "config", JSON): its framework and options (recompute, sequence parallelism, precision, ...)
  // under the fields above. Empty: the predictor's defaults for them.
  std::string config;
  friend bool operator==(const WhatIfConfig&, const WhatIfConfig&) = default;
};

// "1f1b dp=1 pp=4 tp=1 m=8 on h100-sxm"
std::string describe(const WhatIfConfig& c);
// "mlp L=8 h=256 batch=32" (for display); "" for kind kUnknown.
std::string describe(const traces::WorkloadDescriptor& w);

// Reads what a measured run says about itself (Timeline::run: family, mesh, microbatches, chunks,
// workload, hardware) over `defaults`; what it does not know keeps its default. The micro-batch
// size is the workload's global batch over dp x microbatches; a run of the cpu backend is
// predicted in fp32, the format it computed in.
WhatIfConfig config_from_run(const traces::Timeline& t, WhatIfConfig defaults);

// The what-if panel's opening comparison: the measured step, the replay of the schedule that ran
// (the configuration of the run itself) with its error, then the other schedules on the same
// mesh and microbatches.
struct ReplayRow {
  std::string schedule;
  int64_t step_ns = 0;
  double error_percent = 0;  // against the measured step; 0 when there is none
  std::string error;         // the predictor's message where it could not simulate
  int stages = 0;            // pipeline stages (replays of a measured job); 0: not known
};
struct ReplayTable {
  int64_t measured_ns = 0;
  ReplayRow as_run;
  // The schedule that ran with the mean costs per stage the alternatives get (replays of a
  // measured job: what averaging over actions loses).
  std::optional<ReplayRow> as_run_mean;
  std::vector<ReplayRow> alternatives;  // every other schedule the predictor offers
  std::string calibrated_from;          // what the replay's costs came from; "" for simulate()'s
  // A measured job's schedule as the panel's configuration: the family whose order ran
  // (schedule::family_running; "" when none is) on its pipeline; 0s for simulate()'s.
  std::string family;
  int pp = 0, virtual_stages = 0, microbatches = 0;
};

struct Predictor {
  // Throws with a message for a configuration it cannot simulate.
  std::function<traces::Timeline(const WhatIfConfig&)> simulate;
  std::vector<std::string> schedules;  // choices offered in the panel
  std::vector<std::string> hardware;
  std::string default_hardware;  // used when a configuration names none
  // The catalog entry that describes a GPU by the name its driver gives it (a trace's metadata
  // "gpu": "NVIDIA H100 80GB HBM3"), "" for none: the what-if of a profiler trace starts on it.
  // Null: the panel's hardware stays the default.
  std::function<std::string(const std::string&)> hardware_of_board;
  // Fits the predictor's costs to a measured run (its compute spans); later simulate() calls on
  // the calibrated hardware use the fit. Returns what it was calibrated from, one line; throws
  // with the reason when the run cannot calibrate it. Null: the predictor cannot calibrate.
  std::function<std::string(const traces::Timeline&)> calibrate;
  // Replays a measured job from its own traces (an imported torch pipelining job: the schedule
  // that ran with each action's measured costs, then the alternatives, as `meshscope predict
  // --from-trace` does); nullopt for a run that is not one. Throws with the reason where the
  // job's traces fall short. Null: the predictor cannot replay traces.
  std::function<std::optional<ReplayTable>(const traces::Timeline&)> replay_measured;
};

ReplayTable replay_table(const Predictor& p, const WhatIfConfig& as_run, int64_t measured_ns);

// How the what-if panel opens on a measured run: its configuration, what the predictor was
// calibrated from (or why not), and, for a job the predictor replays from its own traces, the
// replay table at once (else the panel computes replay_table in the background).
struct WhatIfStart {
  WhatIfConfig config;
  std::string calibration;
  std::optional<ReplayTable> table;
  // The run names the schedule it ran (RunDescriptor::family), so that replay_table's "as run"
  // row is that schedule; a plain profiler trace does not, and gets no replay table.
  bool schedule_known = false;
  // The predictor's costs come from the run (its replay, or a calibration from its compute
  // spans): only then is a replay table's error against the measured step the model's error.
  bool calibrated = false;
};
WhatIfStart start_whatif(const Predictor& p, const traces::Timeline& measured,
                         const WhatIfConfig& defaults);

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
