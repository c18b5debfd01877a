// What-if from a measured torch pipelining job: the schedule that ran replayed with the costs its
// traces show (each action its own, then the mean per stage), and every other pipeline family on
// the same pp and microbatches. The rows `predict --from-trace` prints and the viewer's what-if
// panel opens with for an imported job; trace_replay_costs.h defines the costs.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/predict/recovered_schedule.h"
#include "sim/predict/trace_replay_costs.h"
#include "traces/analysis.h"
#include "traces/timeline.h"

namespace meshscope::predict {

struct TraceReplayRow {
  std::string schedule;  // "as run (torch)", "as run, mean costs", then family names
  int stages = 0;
  std::optional<int64_t> step_ns;  // nullopt: the replay failed, `error` says why
  std::string error;
};

struct TraceReplayOptions {
  std::string schedule;  // only this alternative family; empty: every pipeline family
  int pp = 0;            // the alternatives' pp; 0: the run's
  int microbatches = 0;  // the alternatives' microbatches; 0: the run's
};

struct TraceReplay {
  int64_t measured_ns = 0;  // the measured step (traces::analyze)
  int pp = 0;
  int microbatches = 0;
  ReplayCosts costs;
  // The schedule that ran with its own per-action costs, the same with the mean costs, then the
  // alternatives (the families' descriptor order, at their default chunks per rank).
  std::vector<TraceReplayRow> rows;
};

// A stage of the schedule that ran without measured compute; the message names `path`.
struct TraceReplayError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Replays `ran` (recover_schedule of the job `t`, analysed as `a`) and the alternatives.
TraceReplay replay_trace(const traces::Timeline& t, const traces::TimelineAnalysis& a,
                         const RecoveredSchedule& ran, const TraceReplayOptions& o,
                         const std::string& path);

// How an alternative `alt` replays on the costs of a run of schedule `ran`: the mean costs, each
// stage its own work where `alt` has the run's stages, each rank its own host gap where it has
// the run's pp.
ReplayOptions alternative_options(const schedule::Schedule& alt, const schedule::Schedule& ran);

// The row's step against the measured one, in percent; 0 without either.
double vs_measured_percent(const TraceReplay& r, const TraceReplayRow& row);

}  // namespace meshscope::predict
