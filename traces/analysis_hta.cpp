// HTA-style breakdown: busy/idle/compute/communication/memory from first to last GPU activity,
// idle split into host wait / kernel wait / other, and communication-computation overlap.
#include "traces/analysis_hta.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "traces/analysis_spans.h"
#include "traces/timeline.h"

namespace meshscope::traces {
namespace detail {
namespace {

constexpr int64_t kNoLaunch = std::numeric_limits<int64_t>::min();

bool is_memory(SpanKind k) { return k == SpanKind::kMemcpy || k == SpanKind::kMemset; }

int64_t launch_of(const LaunchTimes& launches, uint32_t span) {
  if (launches.empty()) return kNoLaunch;
  auto it = std::lower_bound(launches.begin(), launches.end(), std::pair{span, kNoLaunch});
  return it != launches.end() && it->first == span ? it->second : kNoLaunch;
}

// Walks the GPU activity in begin order; every gap of the running union is charged to one idle
// category by the spans that start at the gap's end.
void split_idle(const std::vector<SpanRec>& activity, const LaunchTimes& launches,
                const HtaOptions& options, HtaDeviceBreakdown& out) {
  int64_t reach = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < activity.size();) {
    const int64_t begin = activity[i].begin_ns;
    bool all_launched_late = true;
    int64_t group_end = begin;
    size_t j = i;
    for (; j < activity.size() && activity[j].begin_ns == begin; ++j) {
      const int64_t launch = launch_of(launches, activity[j].index);
      all_launched_late = all_launched_late && launch != kNoLaunch && launch > reach;
      group_end = std::max(group_end, activity[j].end_ns);
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

LaunchTimes launch_times(const Timeline& t) {
  LaunchTimes out;
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

std::optional<HtaDeviceBreakdown> hta_device(const Timeline& t, uint16_t device,
                                             const std::vector<SpanRec>& recs,
                                             const LaunchTimes& launches,
                                             const HtaOptions& options) {
  std::vector<SpanRec> activity;
  for (const SpanRec& r : recs) {
    if (is_device_activity(r.kind)) activity.push_back(r);
  }
  if (activity.empty()) return std::nullopt;
  const Device& dev = t.devices[device];
  HtaDeviceBreakdown b{.device = device, .rank = dev.rank, .name = dev.name};
  // On a meshscope cpu run, a compute action's own collective (its tp all-reduce) is taken out
  // of its compute span, as the device table does (analysis.h): the wait for the group is idle,
  // the transfer communication. Empty for every other source.
  const IntervalSet issued = issued_collectives(t, activity);
  const IntervalSet compute = compute_less_issued(activity, issued);
  const IntervalSet busy = busy_less_issued(activity, compute);
  const IntervalSet comm =
      union_of(activity, [](const SpanRec& r) { return is_communication(r.kind); });
  const IntervalSet memory = union_of(activity, [](const SpanRec& r) { return is_memory(r.kind); });
  b.begin_ns = busy.front().begin_ns;
  b.end_ns = busy.back().end_ns;
  b.span_ns = b.end_ns - b.begin_ns;
  b.busy_ns = total_length(busy);
  b.idle_ns = b.span_ns - b.busy_ns;
  b.compute_ns = total_length(compute);
  b.communication_ns = total_length(comm);
  b.memory_ns = total_length(memory);
  b.comm_compute_overlap_ns = total_length(intersect(comm, compute));
  b.comm_compute_overlap = b.communication_ns > 0
                               ? static_cast<double>(b.comm_compute_overlap_ns) / b.communication_ns
                               : 0.0;
  split_idle(activity, launches, options, b);
  // The waits carved out of compute spans lie inside the activity's running union, where
  // split_idle sees no gap: they are waiting for other ranks, "other" idle.
  b.other_idle_ns += b.idle_ns - (b.host_wait_ns + b.kernel_wait_ns + b.other_idle_ns);
  return b;
}

}  // namespace detail

std::vector<HtaDeviceBreakdown> hta_breakdown(const Timeline& t, const HtaOptions& options) {
  std::vector<HtaDeviceBreakdown> out;
  const auto by_device = detail::spans_by_device(t);
  const auto launches = detail::launch_times(t);
  for (size_t d = 0; d < by_device.size(); ++d) {
    const auto recs = detail::device_records(t, by_device[d]);
    auto b = detail::hta_device(t, static_cast<uint16_t>(d), recs, launches, options);
    if (b) out.push_back(std::move(*b));
  }
  return out;
}

}  // namespace meshscope::traces
