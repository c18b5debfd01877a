// Per-device busy / compute / communication / idle over the step windows, and bubble attribution.
#include "traces/analysis.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "traces/analysis_spans.h"

namespace meshscope::traces {
namespace {

bool is_stage_phase(Phase p) {
  return p == Phase::kForward || p == Phase::kBackward || p == Phase::kInputGrad ||
         p == Phase::kWeightGrad;
}

// The extent of device activity only: host ranges and annotations often reach far past the GPU
// work, and derived idle spans must not widen the window they were derived from.
std::vector<Interval> activity_extent(const Timeline& t) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  for (const Span& s : t.spans) {
    if (!is_device_activity(s.kind)) continue;
    lo = std::min(lo, s.begin_ns);
    hi = std::max(hi, s.end_ns);
  }
  if (lo >= hi) return {};
  return {{lo, hi}};
}

// Splits the idle gaps of one window at the device's first and last stage-compute span in it.
void attribute_bubbles(const IntervalSet& busy, const IntervalSet& stage, const IntervalSet* waits,
                       Interval w, BubbleAttribution& out) {
  const IntervalSet gaps = gaps_within(busy, w);
  // Binary searches, not a scan: a long run has many windows and millions of stage spans.
  const auto first_it =
      std::upper_bound(stage.begin(), stage.end(), w.begin_ns,
                       [](int64_t t, const Interval& iv) { return t < iv.end_ns; });
  if (first_it == stage.end() || first_it->begin_ns >= w.end_ns) {
    out.unattributed_ns += total_length(gaps);
    return;
  }
  const auto last_it =
      std::prev(std::lower_bound(stage.begin(), stage.end(), w.end_ns,
                                 [](const Interval& iv, int64_t t) { return iv.begin_ns < t; }));
  const int64_t first = std::max(first_it->begin_ns, w.begin_ns);
  const int64_t last = std::min(last_it->end_ns, w.end_ns);
  out.warmup_ns += length_within(gaps, {w.begin_ns, first});
  if (waits == nullptr) {
    out.peer_wait_ns += length_within(gaps, {first, last});
  } else {
    const IntervalSet steady = last > first ? intersect(gaps, {{first, last}}) : IntervalSet{};
    const int64_t waiting = total_length(intersect(steady, *waits));
    out.peer_wait_ns += waiting;
    out.other_ns += total_length(steady) - waiting;
  }
  out.cooldown_ns += length_within(gaps, {last, w.end_ns});
}

std::optional<int64_t> peak_activation(const Timeline& t, uint16_t device) {
  std::optional<double> peak;
  for (const Counter& c : t.counters) {
    if (c.device != device || c.name != kActivationBytesCounter) continue;
    for (const CounterSample& s : c.samples) {
      if (std::isfinite(s.value) && (!peak || s.value > *peak)) peak = s.value;
    }
  }
  if (!peak) return std::nullopt;
  return static_cast<int64_t>(std::llround(*peak));
}

// Per (stage, phase): the union of the kCompute spans inside the windows and their microbatches.
std::vector<StagePhaseTime> stage_phase_times(const Timeline& t,
                                              const std::vector<detail::SpanRec>& recs,
                                              const IntervalSet& issued,
                                              const std::vector<Interval>& windows) {
  std::map<std::pair<int, Phase>, std::vector<detail::SpanRec>> groups;
  std::map<std::pair<int, Phase>, std::set<int32_t>> microbatches;
  for (const detail::SpanRec& r : recs) {
    const Span& s = t.spans[r.index];
    if (r.kind != SpanKind::kCompute || s.stage < 0 || !is_stage_phase(r.phase)) continue;
    groups[{s.stage, r.phase}].push_back(r);  // recs are sorted by begin, so each group is too
    if (s.microbatch >= 0) microbatches[{s.stage, r.phase}].insert(s.microbatch);
  }
  std::vector<StagePhaseTime> out;
  for (const auto& [key, list] : groups) {
    const IntervalSet u =
        subtract(detail::union_of(list, [](const detail::SpanRec&) { return true; }), issued);
    StagePhaseTime st{key.first, key.second, 0, static_cast<int>(microbatches[key].size())};
    for (const Interval& w : windows) st.compute_ns += length_within(u, w);
    out.push_back(st);
  }
  return out;
}

DeviceAnalysis analyze_device(const Timeline& t, uint16_t d,
                              const std::vector<detail::SpanRec>& recs,
                              const std::vector<Interval>& windows, bool& has_stage) {
  using detail::SpanRec;
  const Device& dev = t.devices[d];
  DeviceAnalysis a;
  a.device = d;
  a.rank = dev.rank;
  a.name = dev.name;
  a.coord = dev.coord;
  const IntervalSet issued = detail::issued_collectives(t, recs);
  const IntervalSet compute = detail::compute_less_issued(recs, issued);
  const IntervalSet busy = detail::busy_less_issued(recs, compute);
  const IntervalSet comm =
      detail::union_of(recs, [](const SpanRec& r) { return is_communication(r.kind); });
  const IntervalSet overlap = intersect(comm, compute);
  const IntervalSet stage = detail::union_of(recs, [](const SpanRec& r) {
    return r.kind == SpanKind::kCompute && is_stage_phase(r.phase);
  });
  has_stage = has_stage || !stage.empty();
  const IntervalSet waits = detail::union_of(recs, [&](const SpanRec& r) {
    const Span& s = t.spans[r.index];
    return r.kind == SpanKind::kAnnotation && s.stage >= 0 && s.microbatch >= 0;
  });
  for (const Interval& w : windows) {
    a.window_ns += w.length_ns();
    a.busy_ns += length_within(busy, w);
    a.compute_ns += length_within(compute, w);
    a.communication_ns += length_within(comm, w);
    a.overlap_ns += length_within(overlap, w);
    BubbleAttribution& step = a.step_bubbles.emplace_back();
    attribute_bubbles(busy, stage, waits.empty() ? nullptr : &waits, w, step);
    a.bubbles.warmup_ns += step.warmup_ns;
    a.bubbles.peer_wait_ns += step.peer_wait_ns;
    a.bubbles.cooldown_ns += step.cooldown_ns;
    a.bubbles.unattributed_ns += step.unattributed_ns;
    a.bubbles.other_ns += step.other_ns;
  }
  a.stage_phases = stage_phase_times(t, recs, issued, windows);
  a.idle_ns = a.window_ns - a.busy_ns;
  a.bubble_fraction = a.window_ns > 0 ? static_cast<double>(a.idle_ns) / a.window_ns : 0.0;
  a.peak_activation_bytes = peak_activation(t, d);
  return a;
}

}  // namespace

bool is_host_only(const Device& device) {
  return !device.lanes.empty() &&
         std::all_of(device.lanes.begin(), device.lanes.end(),
                     [](const Lane& l) { return l.kind == LaneKind::kHost; });
}

std::vector<Interval> analysis_windows(const Timeline& t) {
  if (t.steps.empty()) return activity_extent(t);
  std::vector<Interval> sorted;
  for (const StepWindow& s : t.steps) sorted.push_back({s.begin_ns, s.end_ns});
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  std::vector<Interval> out;
  int64_t cursor = std::numeric_limits<int64_t>::min();
  for (Interval w : sorted) {
    w.begin_ns = std::max(w.begin_ns, cursor);
    if (w.end_ns <= w.begin_ns) continue;
    out.push_back(w);
    cursor = w.end_ns;
  }
  return out;
}

TimelineAnalysis analyze(const Timeline& t, const AnalysisOptions& options) {
  TimelineAnalysis out;
  out.windows = analysis_windows(t);
  out.from_steps = !t.steps.empty();
  for (const Interval& w : out.windows) out.window_ns += w.length_ns();
  if (!out.windows.empty()) {
    out.step_time_ns = out.window_ns / static_cast<int64_t>(out.windows.size());
  }
  const auto by_device = detail::spans_by_device(t);
  const auto launches = detail::launch_times(t);
  int64_t analysed_devices = 0;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    if (is_host_only(t.devices[d])) continue;
    ++analysed_devices;
    const auto device = static_cast<uint16_t>(d);
    const auto recs = detail::device_records(t, by_device[d]);
    DeviceAnalysis a = analyze_device(t, device, recs, out.windows, out.has_stage_annotations);
    out.busy_ns += a.busy_ns;
    out.compute_ns += a.compute_ns;
    out.communication_ns += a.communication_ns;
    out.overlap_ns += a.overlap_ns;
    out.idle_ns += a.idle_ns;
    out.devices.push_back(std::move(a));
    if (auto h = detail::hta_device(t, device, recs, launches, options.hta)) {
      out.hta.push_back(std::move(*h));
    }
  }
  const int64_t all_windows = out.window_ns * analysed_devices;
  out.bubble_fraction = all_windows > 0 ? static_cast<double>(out.idle_ns) / all_windows : 0.0;
  return out;
}

std::optional<DetachedActivity> detached_activity(const Timeline& t) {
  if (!t.steps.empty()) return std::nullopt;
  std::vector<Interval> activity;
  for (const Span& s : t.spans) {
    if (is_device_activity(s.kind)) activity.push_back({s.begin_ns, s.end_ns});
  }
  if (activity.size() < 2) return std::nullopt;
  std::sort(activity.begin(), activity.end(),
            [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  int64_t reach = activity.front().end_ns;
  int64_t widest = 0;
  size_t before_widest = 0;  // spans that begin before the widest gap
  for (size_t i = 1; i < activity.size(); ++i) {
    if (activity[i].begin_ns - reach > widest) {
      widest = activity[i].begin_ns - reach;
      before_widest = i;
    }
    reach = std::max(reach, activity[i].end_ns);
  }
  const int64_t window = reach - activity.front().begin_ns;
  const size_t n = activity.size();
  const size_t few = std::min(before_widest, n - before_widest);
  if (widest == 0 || static_cast<double>(widest) < 0.9 * static_cast<double>(window) ||
      few > std::max<size_t>(1, n / 100)) {
    return std::nullopt;
  }
  return DetachedActivity{few, n, before_widest == few, widest, window};
}

std::string describe(const DetachedActivity& d) {
  const double share = static_cast<double>(d.gap_ns) / static_cast<double>(d.window_ns);
  return std::to_string(d.spans) + " of " + std::to_string(d.of_spans) + " device activities lie " +
         format_duration(d.gap_ns) + (d.before ? " before" : " after") +
         " the rest: without ProfilerStep#N the window runs from the first to the last device "
         "activity (" +
         format_duration(d.window_ns) + "), and that gap is " +
         std::to_string(static_cast<int>(100.0 * share)) +
         "% of it (a wrong time stamp, or work long before or after the steps?)";
}

}  // namespace meshscope::traces
