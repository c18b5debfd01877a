// Timeline analysis: per-device busy, compute, communication, idle and bubble time over the step
// windows, pipeline bubble attribution, and the HolisticTraceAnalysis-style GPU breakdown.
//
// Definitions (all exact integer nanoseconds; spans are half-open [begin_ns, end_ns)):
//   window     The step windows: Timeline::steps (the importers grow a ProfilerStep#N range to
//              cover the device work launched inside it, import_common.h; sorted; a window
//              starting before the previous one ends is trimmed to start at that end, so no time
//              counts twice), or, when steps is empty, one window from the first begin to the last
//              end of any device-activity span. The windows are global: the same for every device,
//              so a pipeline stage that finishes early and idles until the step ends is charged
//              that idle time.
//   busy       Union of the device's device-activity spans (timeline.h is_device_activity:
//              compute, send, recv, collective, memcpy, memset) on all its lanes, inside the
//              windows. Idle, host and annotation spans never count; kIdle spans are derived data
//              and are ignored as input everywhere here.
//   compute    Union of the device's kCompute spans inside the windows, less what they issued:
//              on a meshscope cpu run (run.source cpu), a compute action performs its own
//              collectives on its thread (a tp all-reduce inside F, B or I; an ep all-to-all), and
//              the collective span of its stage, microbatch and phase inside its span is not
//              compute: from the moment the rank reached it to the transfer's begin (its wait,
//              Timeline::waits) it is idle, then communication. GPU kernels and imported traces
//              are taken as they are (a kernel never holds another's wait).
//   communication  Union of its kSend, kRecv and kCollective spans inside the windows.
//   overlap    communication ∩ compute: time during which the device both computes and
//              communicates.
//   idle       window − busy.
//   bubble fraction  idle / window per device; overall = Σ idle / Σ window over devices.
//   devices    Every device except host-only ones (lanes all LaneKind::kHost, e.g. the CPU
//              processes of an imported PyTorch trace): they run no device work, so they have
//              no bubbles and would only dilute the overall fraction. A device without lanes
//              counts (a mesh rank that did nothing is all bubble).
//   step time  Each window's length; step_time_ns is their mean (integer division).
//   peak activation bytes  Maximum sample of the device's "activation_bytes" counter over the
//              whole Timeline; absent when the device has no such counter.
//
// Pipeline bubble attribution, per device and window, needs meshscope's own annotations: kCompute
// spans with phase forward / backward / input_grad / weight_grad ("stage compute"). Each idle
// gap of the window is split at the device's first and last stage-compute span in that window:
//   warmup     idle before the first stage-compute span (the pipeline filling up),
//   peer_wait  idle between the first and the last (steady state: the device waits on a peer's
//              activations or gradients),
//   cooldown   idle after the last (the pipeline draining; includes waiting for the step's end),
//   unattributed  all idle of a window in which the device has no stage-compute span.
// When the device has wait ranges — kAnnotation spans of one stage's microbatch (stage >= 0 and
// microbatch >= 0), as an imported torch.distributed.pipelining job has: its compute actions wait
// inside them for their input, its transfer actions for their peer — peer_wait is only the
// steady-state idle inside such a range, and the rest of the steady-state idle (between actions,
// in per-step actions such as REDUCE_GRAD) is `other`. Without wait ranges (meshscope's own
// traces, whose compute spans start when their input is ready) all of it is peer_wait.
// warmup + peer_wait + other + cooldown + unattributed = idle exactly, per window and summed.
//
// Per stage and phase (stage_phases): the union of the device's kCompute spans of that stage and
// phase (forward / backward / input_grad / weight_grad) inside the windows, less what they issued
// (as for compute), and how many distinct microbatches they belong to.
//
// The HTA breakdown (hta_breakdown) follows HolisticTraceAnalysis's published definitions; see
// analysis_hta.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/analysis_hta.h"
#include "traces/analysis_intervals.h"
#include "traces/timeline.h"

namespace meshscope::traces {

struct BubbleAttribution {
  int64_t warmup_ns = 0;
  int64_t peer_wait_ns = 0;
  int64_t cooldown_ns = 0;
  int64_t unattributed_ns = 0;
  int64_t other_ns = 0;  // steady-state idle outside wait ranges (0 without wait ranges)
};

struct StagePhaseTime {
  int stage = -1;
  Phase phase = Phase::kNone;
  int64_t compute_ns = 0;  // union of the device's kCompute spans of this stage and phase
  int microbatches = 0;    // distinct microbatches among them
};

struct DeviceAnalysis {
  uint16_t device = 0;  // index into Timeline::devices
  int rank = 0;
  std::string name;
  MeshCoord coord;
  int64_t window_ns = 0;  // Σ window lengths (the same for every device)
  int64_t busy_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t overlap_ns = 0;  // communication ∩ compute
  int64_t idle_ns = 0;
  double bubble_fraction = 0;  // idle / window; 0 when the window is empty
  std::optional<int64_t> peak_activation_bytes;
  BubbleAttribution bubbles;                    // summed over the windows
  std::vector<BubbleAttribution> step_bubbles;  // one per window, in window order
  std::vector<StagePhaseTime> stage_phases;     // by (stage, phase)
};

struct TimelineAnalysis {
  std::vector<Interval> windows;        // the step windows used, normalised as described above
  int64_t step_time_ns = 0;             // mean window length
  int64_t window_ns = 0;                // Σ window lengths
  std::vector<DeviceAnalysis> devices;  // in device order, host-only devices left out
  // Sums over devices.
  int64_t busy_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t overlap_ns = 0;
  int64_t idle_ns = 0;
  double bubble_fraction = 0;          // Σ idle / Σ (window × devices)
  bool has_stage_annotations = false;  // some device had stage-compute spans (attribution valid)
  bool from_steps = false;  // the windows are Timeline::steps (else one, over the device activity)
  std::vector<HtaDeviceBreakdown> hta;  // devices with GPU activity, in device order
};

struct AnalysisOptions {
  HtaOptions hta;
};

// True when the device has lanes and all of them are host lanes.
bool is_host_only(const Device& device);

// The step windows as defined above (shared with add_idle_spans so both agree).
std::vector<Interval> analysis_windows(const Timeline& t);

// Device activity far from the rest, in a timeline without step windows, whose one window runs
// from the first to the last device activity: one kernel with a wrong time stamp, or a copy at
// start-up minutes before training, stretches that window and turns it into idle time.
struct DetachedActivity {
  size_t spans = 0;       // device-activity spans on the far side of the gap
  size_t of_spans = 0;    // all device-activity spans
  bool before = false;    // the few spans come before the gap (else after it)
  int64_t gap_ns = 0;     // the gap: no device busy across the whole timeline
  int64_t window_ns = 0;  // the window the gap is part of
};

// The largest gap in the union of every device's activity, when the timeline has no step windows,
// the gap is at least 90% of the window and the spans on one side of it are at most 1% of all
// (both thresholds an assumption: a step whose devices are idle for 90% of it together, beside
// a handful of kernels, is not a training step). nullopt otherwise. O(n log n).
std::optional<DetachedActivity> detached_activity(const Timeline& t);

// One line for a user: "3 of 2700 device activities lie 4458676.9 s before the rest; ...".
std::string describe(const DetachedActivity& d);

// Everything above in one pass per device: O(n log n) in the number of spans.
TimelineAnalysis analyze(const Timeline& t, const AnalysisOptions& options = {});

// Replaces the Timeline's kIdle spans with the gaps of each device's busy union inside each step
// window (host-only devices skipped, as in analyze), on the device's first compute lane (lane 0
// when it has none; a "compute" lane is added to a device without lanes), each named "idle".
// Idempotent: existing kIdle spans (and any flows touching them) are removed first, and they
// never count as busy. Other spans keep their relative order; the new ones are appended (call
// sort_spans() for canonical order). Returns the number of idle spans added.
size_t add_idle_spans(Timeline& t);

// Removes every kIdle span and the flows touching them, remapping the other flows. Returns the
// number removed.
size_t remove_idle_spans(Timeline& t);

// "0 ns", "850 ns", "12.345 µs", "1.234 ms", "2.500 s": three decimals, truncated, exact.
std::string format_duration(int64_t ns);

}  // namespace meshscope::traces
