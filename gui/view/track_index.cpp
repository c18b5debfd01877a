// Splits each lane into bands of non-overlapping spans and sorts the flows for lookups.
#include "gui/view/track_index.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace meshscope::gui {
namespace {

using traces::Flow;
using traces::Span;
using traces::Timeline;

// float(v) rounded up, so a block summary never claims less than the truth.
float ceil_float(int64_t v) {
  auto f = static_cast<float>(v);
  if (static_cast<double>(f) < static_cast<double>(v))
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

void summarize_blocks(const Timeline& t, Row& row) {
  const size_t n = row.size();
  row.blocks.assign((n + Row::kBlockSpans - 1) / Row::kBlockSpans, Row::Block{});
  int64_t prev_end = 0;
  int64_t busy = 0, idle = 0;
  for (size_t i = 0; i < n; ++i) {
    const Span& s = t.spans[row.span_at(i)];
    Row::Block& b = row.blocks[i / Row::kBlockSpans];
    if (i % Row::kBlockSpans == 0) {
      b.busy_before_ns = busy;
      b.idle_before_ns = idle;
    }
    (s.kind == traces::SpanKind::kIdle ? idle : busy) += s.end_ns - s.begin_ns;
    const int64_t gap = i == 0 ? 0 : std::max<int64_t>(0, s.begin_ns - prev_end);
    b.max_gap_ns = std::max(b.max_gap_ns, ceil_float(gap));
    b.max_width_ns = std::max(b.max_width_ns, ceil_float(s.end_ns - s.begin_ns));
    prev_end = s.end_ns;
  }
}

bool sorted_before(const Span& a, const Span& b) {
  if (a.device != b.device) return a.device < b.device;
  if (a.lane != b.lane) return a.lane < b.lane;
  if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
  return a.end_ns > b.end_ns;
}

}  // namespace

int64_t flow_begin_ns(const Timeline& t, const Flow& f) {
  return std::min(t.spans[f.from].begin_ns, t.spans[f.to].begin_ns);
}
int64_t flow_end_ns(const Timeline& t, const Flow& f) {
  return std::max(t.spans[f.from].end_ns, t.spans[f.to].end_ns);
}

TrackIndex::TrackIndex(const Timeline& t) : timeline_(&t) {
  const auto& spans = t.spans;
  for (size_t i = 1; i < spans.size(); ++i) {
    if (sorted_before(spans[i], spans[i - 1])) {
      throw std::invalid_argument("track index: spans are not sorted (span " + std::to_string(i) +
                                  "); call Timeline::sort_spans() first");
    }
  }
  device_first_row_.assign(t.devices.size() + 1, 0);
  uint32_t i = 0;
  const auto n = static_cast<uint32_t>(spans.size());
  for (uint16_t d = 0; d < t.devices.size(); ++d) {
    device_first_row_[d] = rows_.size();
    while (i < n && spans[i].device == d) {
      uint32_t j = i;
      while (j < n && spans[j].device == d && spans[j].lane == spans[i].lane) ++j;
      build_lane(d, spans[i].lane, i, j);
      i = j;
    }
  }
  device_first_row_[t.devices.size()] = rows_.size();
  if (i != n) {
    throw std::invalid_argument("track index: span " + std::to_string(i) +
                                " names a device that does not exist");
  }

  const auto& flows = t.flows;
  for (const Flow& f : flows) {
    if (f.from >= n || f.to >= n)
      throw std::invalid_argument("track index: flow to a missing span");
  }
  std::vector<uint32_t> order(flows.size());
  std::iota(order.begin(), order.end(), 0u);
  flows_by_from_ = order;
  std::sort(flows_by_from_.begin(), flows_by_from_.end(),
            [&](uint32_t a, uint32_t b) { return flows[a].from < flows[b].from; });
  flows_by_to_ = order;
  std::sort(flows_by_to_.begin(), flows_by_to_.end(),
            [&](uint32_t a, uint32_t b) { return flows[a].to < flows[b].to; });
  flows_by_begin_ = std::move(order);
  std::sort(flows_by_begin_.begin(), flows_by_begin_.end(), [&](uint32_t a, uint32_t b) {
    return flow_begin_ns(t, flows[a]) < flow_begin_ns(t, flows[b]);
  });
  for (const Flow& f : flows) {
    longest_flow_ns_ = std::max(longest_flow_ns_, flow_end_ns(t, f) - flow_begin_ns(t, f));
  }
}

// Greedy interval partitioning: a span goes into the first band whose last span has ended. Spans
// arrive by begin with enclosing ones first, so a nest of annotations stacks outermost on top.
void TrackIndex::build_lane(uint16_t device, uint16_t lane, uint32_t first, uint32_t last) {
  const auto& spans = timeline_->spans;
  std::vector<int64_t> band_end;
  std::vector<std::vector<uint32_t>> bands;
  bool nested = false;
  for (uint32_t i = first; i < last; ++i) {
    const Span& s = spans[i];
    size_t b = 0;
    while (b < band_end.size() && band_end[b] > s.begin_ns) ++b;
    if (b == band_end.size()) {
      band_end.push_back(s.end_ns);
      bands.emplace_back();
      if (b > 0 && !nested) {
        // First overlap: from now on every band lists its spans.
        nested = true;
        bands[0].resize(i - first);
        std::iota(bands[0].begin(), bands[0].end(), first);
      }
    } else {
      band_end[b] = s.end_ns;
    }
    if (nested) bands[b].push_back(i);
  }
  if (!nested) {
    Row row;
    row.device = device;
    row.lane = lane;
    row.first = first;
    row.count = last - first;
    summarize_blocks(*timeline_, row);
    rows_.push_back(std::move(row));
    return;
  }
  for (size_t b = 0; b < bands.size(); ++b) {
    Row row;
    row.device = device;
    row.lane = lane;
    row.depth = static_cast<uint16_t>(b);
    bands[b].shrink_to_fit();
    row.indices = std::move(bands[b]);
    summarize_blocks(*timeline_, row);
    rows_.push_back(std::move(row));
  }
}

std::span<const Row> TrackIndex::device_rows(uint16_t d) const {
  return {rows_.data() + device_first_row_[d], rows_.data() + device_first_row_[d + 1]};
}

size_t TrackIndex::row_of(uint32_t span) const {
  const traces::Span& s = timeline_->spans[span];
  const size_t first = device_first_row_[s.device];
  const size_t last = device_first_row_[s.device + 1];
  // Rows of a device are ordered by lane; a nested lane's bands each list ascending indices.
  size_t r = std::lower_bound(rows_.begin() + static_cast<std::ptrdiff_t>(first),
                              rows_.begin() + static_cast<std::ptrdiff_t>(last), s.lane,
                              [](const Row& row, uint16_t lane) { return row.lane < lane; }) -
             rows_.begin();
  for (; r < last && rows_[r].lane == s.lane; ++r) {
    const Row& row = rows_[r];
    if (row.indices.empty()) return r;
    if (std::binary_search(row.indices.begin(), row.indices.end(), span)) return r;
  }
  throw std::out_of_range("track index: span " + std::to_string(span) + " is in no row");
}

std::optional<uint32_t> TrackIndex::flow_from(uint32_t span) const {
  const auto& flows = timeline_->flows;
  auto it = std::lower_bound(flows_by_from_.begin(), flows_by_from_.end(), span,
                             [&](uint32_t f, uint32_t s) { return flows[f].from < s; });
  if (it == flows_by_from_.end() || flows[*it].from != span) return std::nullopt;
  return *it;
}

std::optional<uint32_t> TrackIndex::flow_to(uint32_t span) const {
  const auto& flows = timeline_->flows;
  auto it = std::lower_bound(flows_by_to_.begin(), flows_by_to_.end(), span,
                             [&](uint32_t f, uint32_t s) { return flows[f].to < s; });
  if (it == flows_by_to_.end() || flows[*it].to != span) return std::nullopt;
  return *it;
}

bool TrackIndex::visible_flows(int64_t begin_ns, int64_t end_ns, size_t limit,
                               std::vector<uint32_t>& out) const {
  const Timeline& t = *timeline_;
  // A flow whose extent reaches into the range begins at most longest_flow_ns_ before it.
  const int64_t earliest = begin_ns - longest_flow_ns_;
  auto it =
      std::lower_bound(flows_by_begin_.begin(), flows_by_begin_.end(), earliest,
                       [&](uint32_t f, int64_t v) { return flow_begin_ns(t, t.flows[f]) < v; });
  size_t added = 0;
  for (; it != flows_by_begin_.end(); ++it) {
    const Flow& f = t.flows[*it];
    if (flow_begin_ns(t, f) >= end_ns) break;
    if (flow_end_ns(t, f) <= begin_ns) continue;
    if (added == limit) return false;
    out.push_back(*it);
    ++added;
  }
  return true;
}

size_t TrackIndex::memory_bytes() const {
  size_t bytes = rows_.capacity() * sizeof(Row) + device_first_row_.capacity() * sizeof(size_t);
  for (const Row& r : rows_) {
    bytes += r.indices.capacity() * sizeof(uint32_t) + r.blocks.capacity() * sizeof(Row::Block);
  }
  bytes += (flows_by_from_.capacity() + flows_by_to_.capacity() + flows_by_begin_.capacity()) *
           sizeof(uint32_t);
  return bytes;
}

}  // namespace meshscope::gui
