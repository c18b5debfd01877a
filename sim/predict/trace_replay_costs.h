// The cost model an imported torch pipelining job is replayed with (`predict --from-trace`, the
// viewer's what-if), measured from its traces (trace_replay_costs.cpp defines each term).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/schedule/schedule.h"
#include "traces/analysis.h"
#include "traces/timeline.h"

namespace meshscope::predict {

// (stage, phase, microbatch): one action of the run; for a transfer, the receiving stage and the
// pass it carries.
using ActionKey = std::tuple<int, traces::Phase, int32_t>;

struct ReplayCosts {
  // Per action of the run (mean over the windows): its work (first op to last op), the host gap
  // before it (from the end of the device's previous action, or from its input's arrival when it
  // waited for it), and its input's transfer (arrival − max(producer's end, recv posted)).
  std::map<ActionKey, int64_t> action_work_ns;
  std::map<ActionKey, int64_t> action_gap_ns;
  std::map<ActionKey, int64_t> transfer_ns;
  // Per stage: the mean work of one F, B, I, W (first op to last op of the action).
  std::map<int, engine::StageTiming> stages;
  int64_t total[5] = {0, 0, 0, 0, 0};  // Σ over stages of the per-microbatch work, by Phase
  // Per device (the rank that ran the stages): the mean host gap before a compute action.
  std::map<int, int64_t> host_gap_ns;
  int64_t mean_host_gap_ns = 0;
  // Per stage: the device that ran it (torch places stage r < pp on pp rank r, so the device of
  // stage r is pp rank r's).
  std::map<int, int> stage_device;
  // A transfer's mean time from max(producer's end, recv posted) to the data's arrival (reported;
  // the replay carries it in the host gaps, see trace_replay_costs.cpp).
  int64_t latency_ns = 0;
  // Time of a step outside the pipeline: from the window's begin to the first op of any rank plus
  // from the last op of any rank to the window's end (mean over the windows).
  int64_t edge_ns = 0;
  size_t gap_samples = 0;      // gaps the per-device host gaps are the mean of
  size_t latency_samples = 0;  // compute actions that waited for their input's arrival
  // The per-action terms and the edge of each analysis window on its own (a profiled step), in
  // window order; `measured` is false for a window no compute action fell in.
  struct Window {
    std::map<ActionKey, int64_t> work_ns;
    std::map<ActionKey, int64_t> gap_ns;
    int64_t edge_ns = 0;
    bool measured = false;
  };
  std::vector<Window> windows;
};

// Measures the terms above from an imported job's compute spans (stage, phase and microbatch
// labelled) inside the analysis windows.
// Only the devices of global ranks in `ranks` count (one pipeline group of a dp > 1 job); empty:
// every device.
ReplayCosts measure_replay_costs(const traces::Timeline& t, const traces::TimelineAnalysis& a,
                                 const std::vector<int>& ranks = {});

// What to leave out of the model (for tests and for the breakdown `predict` prints).
struct ReplayTerms {
  bool host_gap = true;
  bool edge = true;
};

// The stage timings of a schedule of `num_stages` stages with `stage_owner` (pp coordinate per
// stage): the measured work (each stage's own where the schedule has the run's stages, else the
// run's total spread evenly) plus the host gap of the rank that owns the stage (the rank's own
// where the pp is the run's, else the mean).
std::vector<engine::StageTiming> replay_stage_timings(const ReplayCosts& c, int num_stages,
                                                      const std::vector<int>& stage_owner,
                                                      bool same_stages, bool same_ranks,
                                                      const ReplayTerms& terms);

struct ReplayOptions {
  // Each action its own measured costs (the schedule that ran): replay_step replays every
  // measured window with that window's costs and gives the mean of their steps, as the measured
  // step is the mean of the windows' lengths (the longest path through mean costs is shorter than
  // the mean of the windows' longest paths).
  bool per_action = false;
  bool same_stages = false;  // the schedule has the run's stages: each stage its own work
  bool same_ranks = false;   // the schedule has the run's pp: each rank its own host gap
  ReplayTerms terms;
};

// The replayed step of schedule::receives_where_needed(s) on the engine (links without latency),
// plus the edge: per_action, each compute action costs its own work and host gap (one the run
// lacks: 0), window by window (the mean of the windows' replays); otherwise replay_stage_timings.
int64_t replay_step(const schedule::Schedule& s, const ReplayCosts& c, const ReplayOptions& o);

// The engine's run replay_step takes its step from (without the edge), with its Timeline when
// `build_timeline` (the viewer draws it). per_action: the costs of `window` (an index into
// ReplayCosts::windows), or the means over the windows when it is empty.
engine::EngineResult replay_engine(const schedule::Schedule& s, const ReplayCosts& c,
                                   const ReplayOptions& o, bool build_timeline,
                                   std::optional<size_t> window = std::nullopt);

}  // namespace meshscope::predict
