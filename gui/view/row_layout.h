// Vertical layout of the timeline: a header per device, then its rows (lanes and their nesting
// bands); collapsed devices show only the header; devices in a display order (accelerators
// before host threads). Pure geometry, so it is tested without a window.
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

// The order devices are stacked in: devices with device lanes (GPUs, meshscope's ranks) first, in
// device order, then host-only devices (an imported trace's CPU threads, traces::is_host_only),
// which otherwise take most of the height between the GPU rows.
std::vector<uint16_t> device_display_order(const traces::Timeline& t);
// Host-only devices start collapsed (a click on the header expands them) when the trace has
// other devices; a trace of host threads alone shows them all.
std::vector<bool> collapsed_by_default(const traces::Timeline& t);

class RowLayout {
 public:
  RowLayout() = default;
  // collapsed[d] hides device d's rows; missing entries count as expanded. `order` lists the
  // devices top to bottom (each once); empty: device order.
  RowLayout(const TrackIndex& index, size_t num_devices, const RowLayoutOptions& options,
            const std::vector<bool>& collapsed = {}, const std::vector<uint16_t>& order = {});

  const RowLayoutOptions& options() const { return options_; }
  float total_px() const { return total_px_; }
  // Top of device d's header, and of row r (rows of collapsed devices: their header's top).
  float device_top(uint16_t d) const { return device_top_[d]; }
  float row_top(size_t r) const { return row_top_[r]; }
  bool row_shown(size_t r) const { return row_shown_[r]; }
  // Rows whose band intersects [y0, y1), as a range of display positions (row_at turns one
  // into an index into TrackIndex::rows(); in device order they are the same); shown or not.
  std::pair<size_t, size_t> rows_between(float y0, float y1) const;
  size_t row_at(size_t position) const { return display_rows_[position]; }
  std::optional<RowHit> hit(float y) const;

 private:
  RowLayoutOptions options_;
  std::vector<float> device_top_;  // by device index
  // Display order: devices top to bottom and their tops (size devices + 1, the last total_px_,
  // non-decreasing), rows top to bottom and their tops; what the binary searches read.
  std::vector<uint16_t> display_devices_;
  std::vector<float> display_device_top_;
  std::vector<size_t> display_rows_;
  std::vector<float> display_row_top_;
  std::vector<float> row_top_;  // by row index
  std::vector<bool> row_shown_;
  std::vector<uint16_t> row_device_;
  float total_px_ = 0;
};

}  // namespace meshscope::gui
