// Level of detail for one row: the visible spans found by binary search, and runs of spans too
// narrow to see merged into one folded box with a count (as Tracy does), so a frame costs
// O(pixels x log spans) per row instead of O(spans).
#pragma once

#include <cstdint>
#include <vector>

#include "gui/view/time_axis.h"
#include "gui/view/track_index.h"
#include "traces/timeline.h"

namespace meshscope::gui {

// What one row draws: a span (count == 1) or a folded run of `count` consecutive spans starting
// at row position `first`. x in pixels from the plotting area's left edge, clipped to the width.
struct Box {
  float x0 = 0;
  float x1 = 0;
  uint32_t span = 0;   // Timeline span index of the first span in the box
  uint32_t first = 0;  // position of that span in the row
  uint32_t count = 1;
  bool folded() const { return count > 1; }
};

struct LodOptions {
  // Spans narrower than this many pixels are merged with narrow neighbours closer than it.
  double min_px = 3.0;
  // Skip whole blocks by their summaries (Row::blocks). Off only to measure what they save
  // (bench/gui_lod_bench); the boxes are the same either way.
  bool block_summaries = true;
};

// Position in `row` of the first span that ends after t_ns (row.size() if none): the first span
// that can be visible from t_ns on, and the span containing t_ns if any.
size_t first_ending_after(const traces::Timeline& t, const Row& row, int64_t t_ns);

// Appends to `out` the boxes that cover the visible range of the axis, left to right.
void build_boxes(const traces::Timeline& t, const Row& row, const TimeAxis& axis,
                 const LodOptions& options, std::vector<Box>& out);

// Time of `row` before t_ns covered by busy spans (any kind but idle) and by idle spans; the
// rest is gaps. From the block summaries plus at most one block's spans: O(log n + 64).
struct Coverage {
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
};
Coverage coverage_before(const traces::Timeline& t, const Row& row, int64_t t_ns);

// What a folded box draws instead of one grey bar: its time split into `columns` equal parts,
// each with the share of it that is busy and that is idle (0..1), so a row that is 76% idle
// looks 76% idle at every zoom. Appends to `out`.
struct ColumnShare {
  float busy = 0;
  float idle = 0;
};
void coverage_columns(const traces::Timeline& t, const Row& row, int64_t begin_ns, int64_t end_ns,
                      size_t columns, std::vector<ColumnShare>& out);

// The box under pixel x: the one containing x, else the nearest within tolerance_px; -1 if none.
// `boxes` as build_boxes made them (ordered, non-overlapping).
int hit_box(const std::vector<Box>& boxes, float x, float tolerance_px);

}  // namespace meshscope::gui
