// Sorted sweeps over half-open integer intervals.
#include "traces/analysis_intervals.h"

#include <algorithm>

namespace meshscope::traces {
namespace {

// First interval of a normalised set that ends after t (so it may reach into [t, ...)).
IntervalSet::const_iterator first_ending_after(const IntervalSet& set, int64_t t) {
  return std::upper_bound(set.begin(), set.end(), t,
                          [](int64_t value, const Interval& iv) { return value < iv.end_ns; });
}

}  // namespace

IntervalSet merge_intervals(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& iv) { return iv.end_ns <= iv.begin_ns; });
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return a.begin_ns < b.begin_ns || (a.begin_ns == b.begin_ns && a.end_ns > b.end_ns);
  });
  IntervalSet out;
  for (const Interval& iv : intervals) {
    if (!out.empty() && iv.begin_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, iv.end_ns);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

int64_t total_length(const IntervalSet& set) {
  int64_t sum = 0;
  for (const Interval& iv : set) sum += iv.end_ns - iv.begin_ns;
  return sum;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].begin_ns, b[j].begin_ns);
    const int64_t hi = std::min(a[i].end_ns, b[j].end_ns);
    if (lo < hi) out.push_back({lo, hi});
    // Advance whichever ends first; it cannot meet anything later in the other set.
    if (a[i].end_ns < b[j].end_ns) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t j = 0;
  for (Interval piece : a) {
    while (j < b.size() && b[j].end_ns <= piece.begin_ns) ++j;  // b[j] ends before this piece
    for (size_t k = j; k < b.size() && b[k].begin_ns < piece.end_ns; ++k) {
      if (b[k].begin_ns > piece.begin_ns) out.push_back({piece.begin_ns, b[k].begin_ns});
      piece.begin_ns = std::max(piece.begin_ns, b[k].end_ns);
    }
    if (piece.begin_ns < piece.end_ns) out.push_back(piece);
  }
  return out;
}

int64_t length_within(const IntervalSet& set, Interval window) {
  int64_t sum = 0;
  for (auto it = first_ending_after(set, window.begin_ns);
       it != set.end() && it->begin_ns < window.end_ns; ++it) {
    sum += std::min(it->end_ns, window.end_ns) - std::max(it->begin_ns, window.begin_ns);
  }
  return sum;
}

IntervalSet gaps_within(const IntervalSet& set, Interval window) {
  IntervalSet out;
  if (window.end_ns <= window.begin_ns) return out;
  int64_t cursor = window.begin_ns;
  for (auto it = first_ending_after(set, window.begin_ns);
       it != set.end() && it->begin_ns < window.end_ns; ++it) {
    if (it->begin_ns > cursor) out.push_back({cursor, it->begin_ns});
    cursor = std::max(cursor, it->end_ns);
  }
  if (cursor < window.end_ns) out.push_back({cursor, window.end_ns});
  return out;
}

}  // namespace meshscope::traces
