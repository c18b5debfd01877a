// Visible-range search and folding of sub-pixel spans for one row.
#include "gui/view/lod.h"

#include <algorithm>
#include <cmath>

namespace meshscope::gui {
namespace {

using traces::Span;
using traces::Timeline;

// First position in [lo, n) whose span ends at or after t, found by galloping from lo: the next
// fold boundary is usually a few spans away, so this touches memory near lo instead of jumping
// across the whole row as a plain binary search would.
size_t gallop_end_at_least(const Timeline& t, const Row& row, const TimeAxis& axis, size_t lo,
                           size_t n, double rel_ns) {
  // Searches [lo, n).

  const double t_ns = rel_ns;
  auto end_at = [&](size_t i) { return axis.rel(t.spans[row.span_at(i)].end_ns); };
  if (lo >= n || end_at(lo) >= t_ns) return lo;
  size_t step = 1;
  size_t below = lo;  // end_at(below) < t_ns
  while (below + step < n && end_at(below + step) < t_ns) {
    below += step;
    step *= 2;
  }
  size_t hi = std::min(below + step, n);  // end_at(hi) >= t_ns, or hi == n
  size_t left = below + 1;
  while (left < hi) {
    const size_t mid = left + (hi - left) / 2;
    if (end_at(mid) < t_ns) {
      left = mid + 1;
    } else {
      hi = mid;
    }
  }
  return left;
}

// First position whose span begins at or after t_ns (row.size() if none).
size_t first_beginning_at(const Timeline& t, const Row& row, int64_t t_ns) {
  size_t lo = 0;
  size_t hi = row.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (t.spans[row.span_at(mid)].begin_ns < t_ns) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

size_t first_ending_after(const Timeline& t, const Row& row, int64_t t_ns) {
  size_t lo = 0;
  size_t hi = row.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (t.spans[row.span_at(mid)].end_ns <= t_ns) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void build_boxes(const Timeline& t, const Row& row, const TimeAxis& axis, const LodOptions& options,
                 std::vector<Box>& out) {
  // Everything in the axis' relative frame: exact even for epoch-based timestamps.
  const double view_begin = axis.begin_rel_ns();
  const double view_end = axis.end_rel_ns();
  const double min_ns = options.min_px * axis.ns_per_px();
  const double width = axis.width_px();
  constexpr size_t kBlock = Row::kBlockSpans;
  auto clip = [&](double x) { return static_cast<float>(std::clamp(x, -1.0, width + 1.0)); };
  auto end_at = [&](size_t i) { return axis.rel(t.spans[row.span_at(i)].end_ns); };
  // Positions [i, last) hold the spans that can be in view: they end after its begin and begin
  // before its end (begins are whole nanoseconds, so comparing with the ceiling is exact).
  const size_t last =
      first_beginning_at(t, row, axis.origin_ns() + static_cast<int64_t>(std::ceil(view_end)));
  size_t i =
      first_ending_after(t, row, axis.origin_ns() + static_cast<int64_t>(std::floor(view_begin)));
  while (i < last) {
    const Span& s = t.spans[row.span_at(i)];
    const double begin = axis.rel(s.begin_ns);
    double end = axis.rel(s.end_ns);
    if (end <= view_begin) {  // ends inside the nanosecond the view starts in
      ++i;
      continue;
    }
    Box box;
    box.span = row.span_at(i);
    box.first = static_cast<uint32_t>(i);
    size_t next = i + 1;
    if (end - begin < min_ns) {
      // Fold: merge the following spans while each is narrower than min_ns and starts less
      // than min_ns after the previous one ends. Three moves, cheapest first:
      //  - at a block boundary, skip whole blocks whose summary shows no gap or width that
      //    could stop the fold (the zoomed-out case: one fold across a whole row);
      //  - gallop over every span ending within min_ns of the fold's end (each such span is
      //    narrow and close by construction), up to the block boundary;
      //  - take one more span if it is narrow and close; else the fold ends.
      while (next < last) {
        if (options.block_summaries && next % kBlock == 0) {
          size_t k = next / kBlock;
          while ((k + 1) * kBlock <= last && row.blocks[k].max_gap_ns < min_ns &&
                 row.blocks[k].max_width_ns < min_ns) {
            ++k;
          }
          if (k * kBlock > next) {
            next = k * kBlock;
            end = end_at(next - 1);
            continue;
          }
        }
        const size_t boundary = std::min(last, (next / kBlock + 1) * kBlock);
        const size_t far =
            gallop_end_at_least(t, row, axis, next, boundary, std::min(end + min_ns, view_end));
        if (far > next) {
          end = end_at(far - 1);
          next = far;
          continue;
        }
        const Span& c = t.spans[row.span_at(next)];
        const double c_begin = axis.rel(c.begin_ns);
        const double c_end = axis.rel(c.end_ns);
        if (c_begin - end < min_ns && c_end - c_begin < min_ns) {
          end = c_end;
          ++next;
          continue;
        }
        break;
      }
    }
    box.count = static_cast<uint32_t>(next - i);
    box.x0 = clip(axis.x_of_rel(begin));
    box.x1 = clip(axis.x_of_rel(end));
    out.push_back(box);
    i = next;
  }
}

Coverage coverage_before(const Timeline& t, const Row& row, int64_t t_ns) {
  Coverage c;
  const size_t n = row.size();
  if (n == 0) return c;
  const size_t p = first_ending_after(t, row, t_ns);  // spans before p end at or before t_ns
  const size_t start = std::min(p, n - 1) / Row::kBlockSpans * Row::kBlockSpans;
  const Row::Block& b = row.blocks[start / Row::kBlockSpans];
  c.busy_ns = b.busy_before_ns;
  c.idle_ns = b.idle_before_ns;
  auto add = [&](const Span& s, int64_t until) {
    const int64_t d = std::max<int64_t>(0, until - s.begin_ns);
    (s.kind == traces::SpanKind::kIdle ? c.idle_ns : c.busy_ns) += d;
  };
  for (size_t q = start; q < p; ++q) {
    const Span& s = t.spans[row.span_at(q)];
    add(s, s.end_ns);
  }
  if (p < n) add(t.spans[row.span_at(p)], t_ns);  // the span containing t_ns, if any
  return c;
}

void coverage_columns(const Timeline& t, const Row& row, int64_t begin_ns, int64_t end_ns,
                      size_t columns, std::vector<ColumnShare>& out) {
  if (columns == 0 || end_ns <= begin_ns) return;
  const double step = static_cast<double>(end_ns - begin_ns) / static_cast<double>(columns);
  int64_t at = begin_ns;
  Coverage before = coverage_before(t, row, at);
  for (size_t c = 1; c <= columns; ++c) {
    const int64_t next =
        c == columns ? end_ns : begin_ns + static_cast<int64_t>(step * static_cast<double>(c));
    const Coverage after = coverage_before(t, row, next);
    const double len = static_cast<double>(std::max<int64_t>(1, next - at));
    out.push_back({static_cast<float>(static_cast<double>(after.busy_ns - before.busy_ns) / len),
                   static_cast<float>(static_cast<double>(after.idle_ns - before.idle_ns) / len)});
    at = next;
    before = after;
  }
}

int hit_box(const std::vector<Box>& boxes, float x, float tolerance_px) {
  auto it = std::lower_bound(boxes.begin(), boxes.end(), x,
                             [](const Box& b, float v) { return b.x1 < v; });
  int best = -1;
  float best_dist = tolerance_px;
  // The candidates are the first box ending at or after x and the one before it.
  for (auto c : {it, it == boxes.begin() ? boxes.end() : it - 1}) {
    if (c == boxes.end()) continue;
    const float dist = x < c->x0 ? c->x0 - x : (x > c->x1 ? x - c->x1 : 0.0f);
    if (dist <= best_dist) {
      best_dist = dist;
      best = static_cast<int>(c - boxes.begin());
      if (dist == 0) break;
    }
  }
  return best;
}

}  // namespace meshscope::gui
