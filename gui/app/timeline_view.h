// The timeline view: a row per device and sub-rows per lane on a zoomable time axis with a ruler;
// mouse-wheel zoom at the cursor, drag or arrow keys to pan, right-drag to zoom to a selection,
// tooltips, find by name or microbatch, and the replay playhead as a line.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gui/app/session.h"
#include "gui/app/track_painter.h"
#include "gui/view/row_layout.h"
#include "gui/view/time_axis.h"

namespace meshscope::gui {

class TimelineView {
 public:
  static constexpr float kLabelPx = 190;
  static constexpr float kRulerPx = 24;

  void draw(Session& session);

  // Shows [begin_ns, end_ns) with a margin and scrolls the device into view.
  void jump_to(uint16_t device, int64_t begin_ns, int64_t end_ns);

  // Where things were drawn in the last frame: for the pixel tests and the benchmark.
  const TimeAxis& axis() const { return axis_; }
  TimeAxis& axis() { return axis_; }
  const RowLayout& layout() const { return layout_; }
  float screen_x(int64_t t_ns) const { return origin_.x + static_cast<float>(axis_.x_of(t_ns)); }
  int64_t time_at_screen_x(float x) const { return axis_.t_of(x - origin_.x); }
  float screen_row_top(size_t row) const { return origin_.y + layout_.row_top(row); }
  const PaintStats& last_paint() const { return last_paint_; }
  void set_flows(bool on) { flows_ = on; }
  void set_critical_path(bool on) { critical_on_ = on; }
  // The critical paths of the shown run (computed when the toggle is first ticked for it).
  const std::vector<traces::CriticalPath>& critical_paths() const { return critical_; }

 private:
  void reset_for(const Run& run);
  void relayout(const Run& run);
  void expand(const Run& run, uint16_t device);  // shows a collapsed device's rows
  void draw_toolbar(Session& session, const Run& run);
  void draw_ruler(ImDrawList* dl, ImVec2 min, float width);
  void handle_input(Session& session, const Run& run, ImVec2 plot_min, ImVec2 plot_size);
  void run_find(const Run& run);
  void show_match(const Run& run);

  const Run* run_ = nullptr;
  TimeAxis axis_;
  RowLayout layout_;
  std::vector<bool> collapsed_;
  std::vector<uint16_t> order_;
  TrackPainter painter_;
  PaintStats last_paint_;
  std::optional<PaintHover> hover_;
  ImVec2 origin_{0, 0};
  float scroll_y_ = 0;
  std::optional<float> scroll_to_;
  bool flows_ = true;
  bool critical_on_ = false;
  const Run* critical_for_ = nullptr;
  std::vector<traces::CriticalPath> critical_;
  std::optional<uint32_t> selected_;
  std::optional<float> select_from_x_;  // right-drag zoom selection start (plot x)
  // find
  char find_text_[128] = "";
  std::vector<uint32_t> matches_;
  std::vector<bool> marked_;
  size_t match_ = 0;
  bool matches_whole_ = true;
  bool focus_find_ = false;
};

}  // namespace meshscope::gui
