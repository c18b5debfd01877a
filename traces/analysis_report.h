// The analysis as JSON (stable keys, below) and as a printable text table.
//
// JSON schema, version 1. Times are integer nanoseconds; fractions are in [0, 1]:
// {
//   "version": 1,
//   "windows": [{"begin_ns", "end_ns", "duration_ns"}, ...],   // the step windows used
//   "step_time_ns": mean window length,
//   "window_ns": Σ window lengths,
//   "overall": {"busy_ns", "compute_ns", "communication_ns", "overlap_ns", "idle_ns",
//               "bubble_fraction"},                          // sums over devices
//   "devices": [{
//       "device", "rank", "name", "dp", "pp", "tp",           // mesh coords -1 where unknown
//       "window_ns", "busy_ns", "compute_ns", "communication_ns", "overlap_ns", "idle_ns",
//       "bubble_fraction",
//       "peak_activation_bytes": integer, or null without an activation_bytes counter,
//       "bubbles": {"warmup_ns", "peer_wait_ns", "cooldown_ns", "unattributed_ns", "other_ns"},
//       "step_bubbles": [{the same five}, ...],              // one per window
//       "stage_phases": [{"stage", "phase", "compute_ns", "microbatches"}, ...]
//   }, ...],
//   "has_stage_annotations": bool,                            // bubble attribution meaningful
//   "hta": [{                                                 // devices with GPU activity
//       "device", "rank", "name", "begin_ns", "end_ns", "span_ns", "busy_ns", "idle_ns",
//       "compute_ns", "communication_ns", "memory_ns", "host_wait_ns", "kernel_wait_ns",
//       "other_idle_ns", "comm_compute_overlap_ns", "comm_compute_overlap"
//   }, ...]
// }
// `meshscope analyze --json` adds "traces", "window" ("default" | "hta"), "import_warnings" and
// "clocks". With --window hta, "hta" holds HTA 0.5's own figures per file instead
// (analysis_hta_window.h to_json): {"file", "rank", "rounded_to_us", "step_filter", "kernels",
// "gpu_events_dropped", "kernel_time_ns", "idle_ns", "compute_ns", "non_compute_ns",
// "communication_ns", "comm_compute_overlap_ns", "idle_fraction", "compute_fraction",
// "non_compute_fraction", "comm_compute_overlap" (null without communication),
// "streams": [{"stream", "host_wait_ns", "kernel_wait_ns", "other_idle_ns"}]}.
// Definitions of every quantity: analysis.h, analysis_hta.h and analysis_hta_window.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "traces/analysis.h"

namespace meshscope::traces {

inline constexpr int kAnalysisJsonVersion = 1;

nlohmann::json to_json(const TimelineAnalysis& a);

// Per-device table (window, busy, compute, comm, overlap, idle, bubble %, peak activation), the
// overall line, the bubble attribution and the F/B/I/W time per stage when the trace has stage
// annotations, and the HTA table.
std::string format_table(const TimelineAnalysis& a);

}  // namespace meshscope::traces
