// Interval nesting of each lane's spans onto threads (chrome_threads.h).
#include "traces/chrome_threads.h"

#include <algorithm>
#include <numeric>

namespace meshscope::traces {

ThreadPlan plan_threads(const Timeline& t) {
  ThreadPlan plan;
  plan.extra.resize(t.devices.size());
  const auto valid = [&](const Span& s) {
    return s.device < t.devices.size() && s.lane < t.devices[s.device].lanes.size() &&
           s.end_ns >= s.begin_ns;
  };
  // Spans by (device, lane, begin, end descending): enclosing slices before what they enclose.
  // Timelines are mostly in that order already (sort_spans); sort only when one is not.
  const auto before = [&](uint32_t a, uint32_t b) {
    return canonical_before(t.spans[a], t.spans[b]);
  };
  std::vector<uint32_t> order;
  bool sorted = true;
  for (uint32_t i = 1; i < t.spans.size() && sorted; ++i) sorted = !before(i, i - 1);
  if (!sorted) {
    order.resize(t.spans.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), before);
  }
  // Per thread of the current lane, the ends of the slices open on it (a stack).
  std::vector<std::vector<int64_t>> threads;
  uint32_t current_device = UINT32_MAX, current_lane = UINT32_MAX;
  for (size_t n = 0; n < t.spans.size(); ++n) {
    const uint32_t i = sorted ? static_cast<uint32_t>(n) : order[n];
    const Span& s = t.spans[i];
    if (!valid(s)) continue;
    if (s.device != current_device || s.lane != current_lane) {
      current_device = s.device;
      current_lane = s.lane;
      threads.assign(1, {});
    }
    size_t k = 0;
    for (;; ++k) {
      if (k == threads.size()) threads.emplace_back();
      std::vector<int64_t>& open = threads[k];
      while (!open.empty() && open.back() <= s.begin_ns) open.pop_back();
      if (open.empty() || s.end_ns <= open.back()) {
        open.push_back(s.end_ns);
        break;
      }
    }
    if (k == 0) continue;
    std::vector<ExtraThread>& extra = plan.extra[s.device];
    const auto lanes = static_cast<uint32_t>(t.devices[s.device].lanes.size());
    uint32_t tid = 0;
    const auto it = std::find_if(extra.begin(), extra.end(), [&](const ExtraThread& e) {
      return e.lane == s.lane && e.k == k;
    });
    if (it == extra.end()) {
      tid = lanes + static_cast<uint32_t>(extra.size());
      extra.push_back({s.lane, static_cast<uint32_t>(k)});
    } else {
      tid = lanes + static_cast<uint32_t>(it - extra.begin());
    }
    plan.moved.emplace(i, tid);
  }
  return plan;
}

}  // namespace meshscope::traces
