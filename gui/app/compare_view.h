// The compare view: two runs (measured and simulated, or two schedules) one above the other on a
// shared time axis, each starting at its first step, with the per-device differences below.
#pragma once

#include <imgui.h>

#include "gui/app/session.h"
#include "gui/app/track_painter.h"
#include "gui/view/compare_model.h"
#include "gui/view/row_layout.h"
#include "gui/view/time_axis.h"

namespace meshscope::gui {

class CompareView {
 public:
  // shared_axis: both runs on one time scale (compare); off: each run scaled to the width, the
  // same fraction of each in view (what-if, where a CPU run and a GPU prediction differ 100x).
  explicit CompareView(bool shared_axis = true) : shared_axis_(shared_axis) {}

  void draw(Session& session);
  // Whether the last draw_pair showed every row of both runs without scrolling.
  bool rows_fit() const { return rows_fit_; }

  // Draws runs a and b stacked in the region [min, min + size) on one axis; used by the what-if
  // view too. `labels` name the two halves.
  void draw_pair(const Run& a, const Run& b, const char* label_a, const char* label_b, ImVec2 min,
                 ImVec2 size);

 private:
  void reset_for(const Run& a, const Run& b);
  void build_layouts(const RowLayoutOptions& options);
  void draw_table(const CompareModel& m);

  const Run* a_ = nullptr;
  const Run* b_ = nullptr;
  CompareModel model_;
  TimeAxis axis_;  // on a's clock; b is drawn through axis_.shifted(-model_.b_to_a_shift_ns)
  RowLayout layout_a_, layout_b_;
  bool compact_ = false;
  bool rows_fit_ = false;  // rows at 16 px: both runs did not fit at the default height
  float scroll_a_ = 0, scroll_b_ = 0;
  bool shared_axis_ = true;
  TrackPainter painter_;
};

}  // namespace meshscope::gui
