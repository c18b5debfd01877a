// The timeline's rows: each device's lanes split into bands of non-overlapping spans, built once
// per loaded Timeline so every frame can binary-search them. Also the flow lookups.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::gui {

// A horizontal band of spans that never overlap, ordered by begin and therefore also by end:
// the unit that the LOD pass and hit testing binary-search.
struct Row {
  uint16_t device = 0;
  uint16_t lane = 0;
  uint16_t depth = 0;  // nesting level inside the lane; 0 is the outermost band
  // Lanes without nesting (the usual case) are one band that is a contiguous range of the sorted
  // Timeline's spans, [first, first + count), and cost no memory; nested lanes list their spans.
  uint32_t first = 0;
  uint32_t count = 0;
  std::vector<uint32_t> indices;

  // Per block of kBlockSpans consecutive positions: the largest gap before a span (its begin
  // minus the previous span's end) and the largest span width, rounded up. A fold at zoom-out
  // skips a block whose maxima are under its threshold without touching the block's spans, so
  // a frame reads kilobytes of summaries instead of megabytes of spans. Also the busy (any span
  // but idle) and idle-span time of the row before the block, so a folded box can show its busy
  // share without reading the spans it folds (lod.h coverage_before). 0.375 B per span.
  static constexpr size_t kBlockSpans = 64;
  struct Block {
    float max_gap_ns = 0;
    float max_width_ns = 0;
    int64_t busy_before_ns = 0;
    int64_t idle_before_ns = 0;
  };
  std::vector<Block> blocks;

  size_t size() const { return indices.empty() ? count : indices.size(); }
  uint32_t span_at(size_t i) const {
    return indices.empty() ? first + static_cast<uint32_t>(i) : indices[i];
  }
};

class TrackIndex {
 public:
  // The Timeline must stay alive and unchanged while the index is used, and be sorted by
  // Timeline::sort_spans(); throws std::invalid_argument naming the first out-of-order span.
  explicit TrackIndex(const traces::Timeline& t);

  const std::vector<Row>& rows() const { return rows_; }
  // Rows of device d, lanes in order and depths in order within a lane (empty for a device
  // without spans).
  std::span<const Row> device_rows(uint16_t d) const;
  size_t device_row_begin(uint16_t d) const { return device_first_row_[d]; }

  // Index into rows() of the row holding `span`.
  size_t row_of(uint32_t span) const;

  // The flow leaving / entering a span, if any (index into Timeline::flows).
  std::optional<uint32_t> flow_from(uint32_t span) const;
  std::optional<uint32_t> flow_to(uint32_t span) const;
  // Flows that may cross the visible range [begin_ns, end_ns): appended to `out` (indices into
  // Timeline::flows). Stops after `limit` and returns false when more were left out.
  bool visible_flows(int64_t begin_ns, int64_t end_ns, size_t limit,
                     std::vector<uint32_t>& out) const;

  // Heap bytes the index holds beyond the Timeline itself.
  size_t memory_bytes() const;

 private:
  void build_lane(uint16_t device, uint16_t lane, uint32_t first, uint32_t last);

  const traces::Timeline* timeline_;
  std::vector<Row> rows_;
  std::vector<size_t> device_first_row_;  // size devices + 1
  std::vector<uint32_t> flows_by_from_;   // flow indices sorted by from-span
  std::vector<uint32_t> flows_by_to_;     // flow indices sorted by to-span
  std::vector<uint32_t> flows_by_begin_;  // flow indices sorted by the earlier endpoint's begin
  int64_t longest_flow_ns_ = 0;           // widest time extent of any flow
};

// Begin of a flow's time extent: the earlier of its two spans' begins; end: the later end.
int64_t flow_begin_ns(const traces::Timeline& t, const traces::Flow& f);
int64_t flow_end_ns(const traces::Timeline& t, const traces::Flow& f);

}  // namespace meshscope::gui
