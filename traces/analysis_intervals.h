// Exact integer-nanosecond interval arithmetic: unions, intersections, gaps and clipped lengths.
#pragma once

#include <cstdint>
#include <vector>

namespace meshscope::traces {

// Half-open [begin_ns, end_ns). Empty when end_ns <= begin_ns.
struct Interval {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t length_ns() const { return end_ns > begin_ns ? end_ns - begin_ns : 0; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// A normalised set: sorted by begin, pairwise disjoint and non-adjacent, no empty intervals.
// Every function below that takes an IntervalSet expects this form and returns it.
using IntervalSet = std::vector<Interval>;

// The union of arbitrary intervals: sort, then one sweep merging overlapping or touching ones.
// O(n log n). Empty intervals are dropped.
IntervalSet merge_intervals(std::vector<Interval> intervals);

// Total length of a normalised set.
int64_t total_length(const IntervalSet& set);

// a ∩ b, by a linear two-pointer sweep.
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);

// a − b: the parts of a that no interval of b covers, by a linear two-pointer sweep.
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);

// How much of `set` falls inside `window`: binary search to the first candidate, then a walk over
// the intervals that reach into the window. O(log n + k).
int64_t length_within(const IntervalSet& set, Interval window);

// window − set: the gaps of `set` inside `window`, in order.
IntervalSet gaps_within(const IntervalSet& set, Interval window);

}  // namespace meshscope::traces
