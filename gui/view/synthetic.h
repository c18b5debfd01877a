// Synthetic pipeline-parallel Timelines of any size: a 1F1B schedule on a dp x pp x tp mesh with
// send/recv spans and flows, a dp all-reduce and an optimizer step per step. For the --bench
// frame-time figures and the view tests; no idle spans (traces::add_idle_spans derives them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "traces/timeline.h"

namespace meshscope::gui {

struct SyntheticOptions {
  int dp = 1;
  int pp = 4;
  int tp = 1;
  int microbatches = 8;
  int steps = 1;
  int64_t forward_ns = 10'000;
  int64_t backward_ns = 20'000;
  int64_t p2p_ns = 2'000;         // send/recv of one activation or gradient
  int64_t allreduce_ns = 15'000;  // dp gradient all-reduce at the end of a step (dp > 1)
  int64_t optimizer_ns = 5'000;
  double jitter = 0.1;  // each duration scaled by a factor in [1 - jitter/2, 1 + jitter/2]
  uint64_t seed = 1;
};

// The number of steps that makes about `spans` spans (before idle spans) with the other options.
int steps_for_spans(const SyntheticOptions& options, size_t spans);

// Peak memory while a synthetic trace of `spans` spans is built and opened (spans, idle spans,
// the track index): 104 B per span, as measured for issue 14 (`meshscope-gui --synthetic
// 100000000` peaked at 10.4 GB); 55.7 B per span stay resident afterwards (docs/GUI.md).
inline constexpr double kSyntheticPeakBytesPerSpan = 104;
double synthetic_peak_bytes(size_t spans);

// Adds the devices of a dp x pp x tp mesh to `t`, rank (dp * pp + pp) * tp + tp at its mesh
// coordinates, named "rank 5 · dp0 pp2 tp1", each with lanes 0 "compute" and 1 "comm".
void add_mesh_devices(traces::Timeline& t, int dp, int pp, int tp);

// The Timeline, sorted. Lanes per device: 0 "compute", 1 "comm". Span names like "F s2 mb5".
// Throws std::invalid_argument when a dimension or count is < 1.
traces::Timeline make_synthetic_pipeline(const SyntheticOptions& options);

}  // namespace meshscope::gui
