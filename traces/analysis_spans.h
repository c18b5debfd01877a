// Internal to the analysis files: spans grouped per device, and unions of the spans of one kind.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/analysis_intervals.h"
#include "traces/timeline.h"

namespace meshscope::traces::detail {

// For each device, the indices of its spans in Timeline order (kIdle spans left out: they are
// derived data). Throws std::out_of_range naming the span whose device index is out of range.
std::vector<std::vector<uint32_t>> spans_by_device(const Timeline& t);

// The union of the spans in `indices` for which keep(span) holds.
template <typename Keep>
IntervalSet union_of(const Timeline& t, const std::vector<uint32_t>& indices, Keep keep) {
  std::vector<Interval> intervals;
  for (uint32_t i : indices) {
    const Span& s = t.spans[i];
    if (keep(s)) intervals.push_back({s.begin_ns, s.end_ns});
  }
  return merge_intervals(std::move(intervals));
}

}  // namespace meshscope::traces::detail
