// HTA-style breakdown: busy/idle/compute/communication/memory from first to last GPU activity,
// idle split into host wait / kernel wait / other, and communication-computation overlap.
#include "traces/analysis_hta.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "traces/analysis_spans.h"
#include "traces/timeline.h"

namespace meshscope::traces {
namespace {

constexpr int64_t kNoLaunch = std::numeric_limits<int64_t>::min();

bool is_memory(SpanKind k) { return k == SpanKind::kMemcpy || k == SpanKind::kMemset; }

// For each span launched from the host (a flow kHost -> device activity), when the launch call
// began: HTA's "ts_runtime". Sorted by span index for binary search.
std::vector<std::pair<uint32_t, int64_t>> launch_times(const Timeline& t) {
  std::vector<std::pair<uint32_t, int64_t>> out;
  for (const Flow& f : t.flows) {
    if (f.from >= t.spans.size() || f.to >= t.spans.size()) continue;
    const Span& from = t.spans[f.from];
    if (from.kind == SpanKind::kHost && is_device_activity(t.spans[f.to].kind)) {
      out.emplace_back(f.to, from.begin_ns);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t launch_of(const std::vector<std::pair<uint32_t, int64_t>>& launches, uint32_t span) {
  auto it = std::lower_bound(launches.begin(), launches.end(), std::pair{span, kNoLaunch});
  return it != launches.end() && it->first == span ? it->second : kNoLaunch;
}

// Walks the device's GPU activity in begin order; every gap of the running union is charged to
// one idle category by the spans that end it.
void split_idle(const Timeline& t, std::vector<uint32_t> activity,
                const std::vector<std::pair<uint32_t, int64_t>>& launches,
                const HtaOptions& options, HtaDeviceBreakdown& out) {
  std::sort(activity.begin(), activity.end(), [&](uint32_t a, uint32_t b) {
    return t.spans[a].begin_ns < t.spans[b].begin_ns;
  });
  int64_t reach = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < activity.size();) {
    const int64_t begin = t.spans[activity[i]].begin_ns;
    size_t j = i;
    bool all_launched_late = true;
    int64_t group_end = begin;
    for (; j < activity.size() && t.spans[activity[j]].begin_ns == begin; ++j) {
      const int64_t launch = launch_of(launches, activity[j]);
      all_launched_late = all_launched_late && launch != kNoLaunch && launch > reach;
      group_end = std::max(group_end, t.spans[activity[j]].end_ns);
    }
    if (i > 0 && begin > reach) {
      const int64_t gap = begin - reach;
      if (all_launched_late) {
        out.host_wait_ns += gap;
      } else if (gap < options.consecutive_kernel_delay_ns) {
        out.kernel_wait_ns += gap;
      } else {
        out.other_idle_ns += gap;
      }
    }
    reach = std::max(reach, group_end);
    i = j;
  }
}

}  // namespace

std::vector<HtaDeviceBreakdown> hta_breakdown(const Timeline& t, const HtaOptions& options) {
  std::vector<HtaDeviceBreakdown> out;
  const auto by_device = detail::spans_by_device(t);
  const auto launches = launch_times(t);
  for (size_t d = 0; d < by_device.size(); ++d) {
    std::vector<uint32_t> activity;
    for (uint32_t i : by_device[d]) {
      const Span& s = t.spans[i];
      if (is_device_activity(s.kind) && s.end_ns > s.begin_ns) activity.push_back(i);
    }
    if (activity.empty()) continue;
    const Device& dev = t.devices[d];
    HtaDeviceBreakdown b{.device = static_cast<uint16_t>(d), .rank = dev.rank, .name = dev.name};
    const IntervalSet busy = detail::union_of(t, activity, [](const Span&) { return true; });
    const IntervalSet compute = detail::union_of(
        t, activity, [](const Span& s) { return s.kind == SpanKind::kCompute; });
    const IntervalSet comm =
        detail::union_of(t, activity, [](const Span& s) { return is_communication(s.kind); });
    const IntervalSet memory =
        detail::union_of(t, activity, [](const Span& s) { return is_memory(s.kind); });
    b.begin_ns = busy.front().begin_ns;
    b.end_ns = busy.back().end_ns;
    b.span_ns = b.end_ns - b.begin_ns;
    b.busy_ns = total_length(busy);
    b.idle_ns = b.span_ns - b.busy_ns;
    b.compute_ns = total_length(compute);
    b.communication_ns = total_length(comm);
    b.memory_ns = total_length(memory);
    b.comm_compute_overlap_ns = total_length(intersect(comm, compute));
    b.comm_compute_overlap =
        b.communication_ns > 0
            ? static_cast<double>(b.comm_compute_overlap_ns) / b.communication_ns
            : 0.0;
    split_idle(t, std::move(activity), launches, options, b);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace meshscope::traces
