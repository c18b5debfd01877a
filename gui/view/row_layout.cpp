// Device headers and row bands stacked top to bottom.
#include "gui/view/row_layout.h"

#include <algorithm>

namespace meshscope::gui {

RowLayout::RowLayout(const TrackIndex& index, size_t num_devices, const RowLayoutOptions& options,
                     const std::vector<bool>& collapsed)
    : options_(options) {
  const size_t num_rows = index.rows().size();
  row_top_.assign(num_rows, 0);
  row_shown_.assign(num_rows, false);
  row_device_.assign(num_rows, 0);
  float y = 0;
  for (size_t d = 0; d < num_devices; ++d) {
    device_top_.push_back(y);
    const float header_top = y;
    y += options.header_px;
    const bool hidden = d < collapsed.size() && collapsed[d];
    const auto dev = static_cast<uint16_t>(d);
    for (size_t r = index.device_row_begin(dev);
         r < index.device_row_begin(dev) + index.device_rows(dev).size(); ++r) {
      row_device_[r] = dev;
      if (hidden) {
        row_top_[r] = header_top;
        continue;
      }
      row_top_[r] = y;
      row_shown_[r] = true;
      y += options.row_px;
    }
    y += options.gap_px;
  }
  device_top_.push_back(y);
  total_px_ = y;
}

std::pair<size_t, size_t> RowLayout::rows_between(float y0, float y1) const {
  // row_top_ is non-decreasing, so both ends are binary searches.
  const auto first = std::lower_bound(row_top_.begin(), row_top_.end(), y0 - options_.row_px,
                                      [](float top, float v) { return top <= v; });
  const auto last = std::lower_bound(first, row_top_.end(), y1);
  return {static_cast<size_t>(first - row_top_.begin()),
          static_cast<size_t>(last - row_top_.begin())};
}

std::optional<RowHit> RowLayout::hit(float y) const {
  if (y < 0 || y >= total_px_ || device_top_.size() < 2) return std::nullopt;
  const auto next = std::upper_bound(device_top_.begin(), device_top_.end(), y);
  const auto d = static_cast<uint16_t>(next - device_top_.begin() - 1);
  const float top = device_top_[d];
  if (y < top + options_.header_px) return RowHit{d, std::nullopt};
  auto r = std::upper_bound(row_top_.begin(), row_top_.end(), y);
  if (r == row_top_.begin()) return std::nullopt;
  const auto row = static_cast<size_t>(r - row_top_.begin() - 1);
  if (!row_shown_[row] || row_device_[row] != d || y >= row_top_[row] + options_.row_px) {
    return std::nullopt;  // the gap after a device, or a collapsed device
  }
  return RowHit{d, row};
}

}  // namespace meshscope::gui
