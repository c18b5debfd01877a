// Splits each device's window time into the stats bar's parts and ranks the idle gaps.
#include "gui/view/stats_model.h"

#include <algorithm>

namespace meshscope::gui {

StatsModel build_stats(const traces::Timeline& t, const traces::TimelineAnalysis& a,
                       size_t max_gaps) {
  StatsModel m;
  m.window_ns = a.window_ns;
  m.step_time_ns = a.step_time_ns;
  m.steps = a.windows.size();
  m.bubble_fraction = a.bubble_fraction;
  m.host_devices = static_cast<size_t>(std::count_if(
      t.devices.begin(), t.devices.end(), [](const auto& d) { return traces::is_host_only(d); }));
  for (const traces::DeviceAnalysis& d : a.devices) {
    StatsBar bar;
    bar.device = d.device;
    auto& ns = bar.ns;
    auto at = [&](StatPart p) -> int64_t& { return ns[static_cast<size_t>(p)]; };
    at(StatPart::kOverlap) = d.overlap_ns;
    at(StatPart::kCompute) = d.compute_ns - d.overlap_ns;
    at(StatPart::kComm) = d.communication_ns - d.overlap_ns;
    at(StatPart::kOtherBusy) = d.busy_ns - d.compute_ns - d.communication_ns + d.overlap_ns;
    if (a.has_stage_annotations) {
      at(StatPart::kWarmup) = d.bubbles.warmup_ns;
      at(StatPart::kPeerWait) = d.bubbles.peer_wait_ns;
      at(StatPart::kCooldown) = d.bubbles.cooldown_ns;
      at(StatPart::kIdle) = d.bubbles.unattributed_ns;
    } else {
      at(StatPart::kIdle) = d.idle_ns;
    }
    bar.idle_ns = d.idle_ns;
    bar.bubble_fraction = d.bubble_fraction;
    m.bars.push_back(bar);
  }
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const traces::Span& s = t.spans[i];
    if (s.kind == traces::SpanKind::kIdle)
      m.largest_gaps.push_back({i, s.device, s.begin_ns, s.end_ns});
  }
  auto longer = [](const IdleGap& x, const IdleGap& y) {
    const int64_t dx = x.end_ns - x.begin_ns, dy = y.end_ns - y.begin_ns;
    return dx != dy ? dx > dy : x.begin_ns < y.begin_ns;
  };
  const size_t keep = std::min(max_gaps, m.largest_gaps.size());
  std::partial_sort(m.largest_gaps.begin(),
                    m.largest_gaps.begin() + static_cast<std::ptrdiff_t>(keep),
                    m.largest_gaps.end(), longer);
  m.largest_gaps.resize(keep);
  return m;
}

}  // namespace meshscope::gui
