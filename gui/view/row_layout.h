// Vertical layout of the timeline: a header per device, then its rows (lanes and their nesting
// bands); collapsed devices show only the header. Pure geometry, so it is tested without a window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gui/view/track_index.h"

namespace meshscope::gui {

struct RowLayoutOptions {
  float header_px = 18;  // device name line
  float row_px = 22;     // one band of spans
  float gap_px = 6;      // after each device
};

// What lies at a height: a device's header, one of its rows, or nothing (a gap, past the end).
struct RowHit {
  uint16_t device = 0;
  std::optional<size_t> row;  // index into TrackIndex::rows(); empty on the header
};

class RowLayout {
 public:
  RowLayout() = default;
  // collapsed[d] hides device d's rows; missing entries count as expanded.
  RowLayout(const TrackIndex& index, size_t num_devices, const RowLayoutOptions& options,
            const std::vector<bool>& collapsed = {});

  const RowLayoutOptions& options() const { return options_; }
  float total_px() const { return total_px_; }
  // Top of device d's header, and of row r (rows of collapsed devices: their header's top).
  float device_top(uint16_t d) const { return device_top_[d]; }
  float row_top(size_t r) const { return row_top_[r]; }
  bool row_shown(size_t r) const { return row_shown_[r]; }
  // Rows whose band intersects [y0, y1), as a range of row indices; shown or not.
  std::pair<size_t, size_t> rows_between(float y0, float y1) const;
  std::optional<RowHit> hit(float y) const;

 private:
  RowLayoutOptions options_;
  std::vector<float> device_top_;  // size devices + 1; the last is total_px_
  std::vector<float> row_top_;
  std::vector<bool> row_shown_;
  std::vector<uint16_t> row_device_;
  float total_px_ = 0;
};

}  // namespace meshscope::gui
