// Internal to the analysis files: each device's spans as compact records sorted by begin, and
// unions of them in one linear sweep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "traces/analysis_hta.h"
#include "traces/analysis_intervals.h"
#include "traces/timeline.h"

namespace meshscope::traces::detail {

// What the sweeps need of a span, packed so that one device's spans stay in cache.
struct SpanRec {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t index = 0;  // into Timeline::spans
  SpanKind kind = SpanKind::kCompute;
  Phase phase = Phase::kNone;
};

// For each device, the indices of its spans in Timeline order (kIdle spans left out: they are
// derived data). Throws std::out_of_range naming the span whose device index is out of range.
std::vector<std::vector<uint32_t>> spans_by_device(const Timeline& t);

// The records of `indices`, sorted by begin_ns (empty and inverted spans dropped).
std::vector<SpanRec> device_records(const Timeline& t, const std::vector<uint32_t>& indices);

// The union of the records (sorted by begin) for which keep(rec) holds: one linear sweep.
template <typename Keep>
IntervalSet union_of(const std::vector<SpanRec>& recs, Keep keep) {
  IntervalSet out;
  for (const SpanRec& r : recs) {
    if (!keep(r)) continue;
    if (!out.empty() && r.begin_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, r.end_ns);
    } else {
      out.push_back({r.begin_ns, r.end_ns});
    }
  }
  return out;
}

// The collectives the device's compute actions performed themselves ("compute" in analysis.h):
// on a meshscope cpu run, [reached, end) of each collective span of a stage's microbatch inside a
// compute span of the same stage, microbatch and phase; empty for every other source.
IntervalSet issued_collectives(const Timeline& t, const std::vector<SpanRec>& recs);
// The collective spans behind issued_collectives, as indices into Timeline::spans: the part of
// each from its rank's arrival (Timeline::reached_ns) to its begin was waiting for the group, the
// span itself the transfer.
std::vector<uint32_t> issued_collective_spans(const Timeline& t, const std::vector<SpanRec>& recs);
// The union of the kCompute records less `issued`.
IntervalSet compute_less_issued(const std::vector<SpanRec>& recs, const IntervalSet& issued);
// The union of the device-activity records, their compute replaced by `compute`
// (compute_less_issued): a compute action's wait inside a collective it performs is idle.
IntervalSet busy_less_issued(const std::vector<SpanRec>& recs, const IntervalSet& compute);

// For each span launched from the host (a flow kHost -> device activity), when the launch call
// began, sorted by span index.
using LaunchTimes = std::vector<std::pair<uint32_t, int64_t>>;
LaunchTimes launch_times(const Timeline& t);

// The HTA breakdown of one device from its records; nullopt without GPU activity.
std::optional<HtaDeviceBreakdown> hta_device(const Timeline& t, uint16_t device,
                                             const std::vector<SpanRec>& recs,
                                             const LaunchTimes& launches,
                                             const HtaOptions& options);

}  // namespace meshscope::traces::detail
