// Device headers and row bands stacked top to bottom.
#include "gui/view/row_layout.h"

#include <algorithm>
#include <numeric>

#include "traces/analysis.h"

namespace meshscope::gui {

std::vector<uint16_t> device_display_order(const traces::Timeline& t) {
  std::vector<uint16_t> order(t.devices.size());
  std::iota(order.begin(), order.end(), uint16_t{0});
  std::stable_partition(order.begin(), order.end(),
                        [&](uint16_t d) { return !traces::is_host_only(t.devices[d]); });
  return order;
}

std::vector<bool> collapsed_by_default(const traces::Timeline& t) {
  std::vector<bool> collapsed(t.devices.size(), false);
  const bool any_device = std::any_of(t.devices.begin(), t.devices.end(),
                                      [](const auto& d) { return !traces::is_host_only(d); });
  if (!any_device) return collapsed;
  for (size_t d = 0; d < t.devices.size(); ++d) collapsed[d] = traces::is_host_only(t.devices[d]);
  return collapsed;
}

RowLayout::RowLayout(const TrackIndex& index, size_t num_devices, const RowLayoutOptions& options,
                     const std::vector<bool>& collapsed, const std::vector<uint16_t>& order)
    : options_(options) {
  const size_t num_rows = index.rows().size();
  row_top_.assign(num_rows, 0);
  row_shown_.assign(num_rows, false);
  row_device_.assign(num_rows, 0);
  device_top_.assign(num_devices + 1, 0);
  display_devices_ = order;
  if (display_devices_.size() != num_devices) {
    display_devices_.resize(num_devices);
    std::iota(display_devices_.begin(), display_devices_.end(), uint16_t{0});
  }
  float y = 0;
  for (const uint16_t dev : display_devices_) {
    device_top_[dev] = y;
    display_device_top_.push_back(y);
    const float header_top = y;
    y += options.header_px;
    const bool hidden = dev < collapsed.size() && collapsed[dev];
    for (size_t r = index.device_row_begin(dev);
         r < index.device_row_begin(dev) + index.device_rows(dev).size(); ++r) {
      row_device_[r] = dev;
      display_rows_.push_back(r);
      if (hidden) {
        row_top_[r] = header_top;
      } else {
        row_top_[r] = y;
        row_shown_[r] = true;
        y += options.row_px;
      }
      display_row_top_.push_back(row_top_[r]);
    }
    y += options.gap_px;
  }
  device_top_[num_devices] = y;
  display_device_top_.push_back(y);
  total_px_ = y;
}

std::pair<size_t, size_t> RowLayout::rows_between(float y0, float y1) const {
  // Tops in display order are non-decreasing, so both ends are binary searches.
  const auto& tops = display_row_top_;
  const auto first = std::lower_bound(tops.begin(), tops.end(), y0 - options_.row_px,
                                      [](float top, float v) { return top <= v; });
  const auto last = std::lower_bound(first, tops.end(), y1);
  return {static_cast<size_t>(first - tops.begin()), static_cast<size_t>(last - tops.begin())};
}

std::optional<RowHit> RowLayout::hit(float y) const {
  if (y < 0 || y >= total_px_ || display_device_top_.size() < 2) return std::nullopt;
  const auto& dtops = display_device_top_;
  const auto next = std::upper_bound(dtops.begin(), dtops.end(), y);
  const auto p = static_cast<size_t>(next - dtops.begin() - 1);
  const uint16_t d = display_devices_[p];
  if (y < dtops[p] + options_.header_px) return RowHit{d, std::nullopt};
  const auto& tops = display_row_top_;
  auto r = std::upper_bound(tops.begin(), tops.end(), y);
  if (r == tops.begin()) return std::nullopt;
  const size_t row = display_rows_[static_cast<size_t>(r - tops.begin() - 1)];
  if (!row_shown_[row] || row_device_[row] != d || y >= row_top_[row] + options_.row_px) {
    return std::nullopt;  // the gap after a device, or a collapsed device
  }
  return RowHit{d, row};
}

}  // namespace meshscope::gui
