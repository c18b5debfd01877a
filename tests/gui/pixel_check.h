// Shared by the screenshot tests: where a device is idle according to the analysis (computed
// from the Timeline's activity spans, not from the viewer's idle spans), and pixel counting.
#pragma once

#include <cstdint>
#include <vector>

#include "gui/view/png.h"
#include "traces/analysis.h"
#include "traces/analysis_intervals.h"
#include "traces/timeline.h"

namespace meshscope::gui::pixels {

// Per device: window minus the union of its device-activity spans, as the analysis defines idle.
inline std::vector<traces::IntervalSet> idle_by_device(const traces::Timeline& t) {
  std::vector<std::vector<traces::Interval>> busy(t.devices.size());
  for (const traces::Span& s : t.spans) {
    if (traces::is_device_activity(s.kind)) busy[s.device].push_back({s.begin_ns, s.end_ns});
  }
  const auto windows = traces::analysis_windows(t);
  std::vector<traces::IntervalSet> idle;
  for (auto& b : busy) {
    const traces::IntervalSet merged = traces::merge_intervals(std::move(b));
    traces::IntervalSet gaps;
    for (const traces::Interval& w : windows) {
      for (const traces::Interval& g : traces::gaps_within(merged, w)) gaps.push_back(g);
    }
    idle.push_back(std::move(gaps));
  }
  return idle;
}

// True when [begin, end) lies entirely inside one interval of the set.
inline bool inside(const traces::IntervalSet& set, int64_t begin, int64_t end) {
  for (const traces::Interval& i : set) {
    if (i.begin_ns <= begin && end <= i.end_ns) return true;
  }
  return false;
}

// True when [begin, end) touches no interval of the set.
inline bool outside(const traces::IntervalSet& set, int64_t begin, int64_t end) {
  for (const traces::Interval& i : set) {
    if (i.begin_ns < end && begin < i.end_ns) return false;
  }
  return true;
}

inline int count_color(const Image& img, int x0, int y0, int x1, int y1, uint32_t color) {
  int n = 0;
  for (int y = std::max(y0, 0); y < std::min(y1, img.height); ++y) {
    for (int x = std::max(x0, 0); x < std::min(x1, img.width); ++x) n += img.pixel(x, y) == color;
  }
  return n;
}

}  // namespace meshscope::gui::pixels
