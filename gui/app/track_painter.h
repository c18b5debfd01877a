// Draws a run's rows with ImDrawList: device headers, lane labels, span boxes coloured by what
// they are (folded boxes for sub-pixel runs), labels where they fit, and flow arrows. Shared by
// the timeline, compare and what-if views.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "gui/app/run.h"
#include "gui/view/lod.h"
#include "gui/view/row_layout.h"
#include "gui/view/time_axis.h"
#include "traces/analysis_critical_path.h"

namespace meshscope::gui {

struct PaintTarget {
  ImDrawList* draw_list = nullptr;
  ImVec2 origin;       // screen position of time-axis x = 0 at layout y = 0
  float label_px = 0;  // width of the lane-label column left of origin.x
  float clip_top = 0;  // screen rows drawn: [clip_top, clip_bottom)
  float clip_bottom = 0;
};

struct PaintOptions {
  LodOptions lod;
  bool flows = true;
  size_t max_flows = 4000;                    // beyond this many in view, arrows are left out
  const std::vector<bool>* marked = nullptr;  // spans to outline (find results), by index
  std::optional<uint32_t> selected;
  // Critical paths to highlight (traces/analysis_critical_path.h): each span on them outlined,
  // consecutive spans joined by a line from where one released the next to where it began.
  const std::vector<traces::CriticalPath>* critical = nullptr;
  std::optional<ImVec2> mouse;  // screen position, to report what is under it
};

// What lies under the mouse after a paint.
struct PaintHover {
  uint16_t device = 0;
  std::optional<size_t> row;  // none: the device header
  std::optional<Box> box;
};

struct PaintStats {
  size_t rows = 0;
  size_t boxes = 0;
  size_t folded = 0;
  size_t flows = 0;
  bool flows_left_out = false;
};

class TrackPainter {
 public:
  PaintStats paint(const PaintTarget& target, const Run& run, const RowLayout& layout,
                   const TimeAxis& axis, const PaintOptions& options,
                   std::optional<PaintHover>* hover = nullptr);

 private:
  void paint_row(const PaintTarget& target, const Run& run, size_t row, float y,
                 const RowLayout& layout, const TimeAxis& axis, const PaintOptions& options,
                 PaintStats& stats);
  void paint_critical(const PaintTarget& target, const Run& run, const RowLayout& layout,
                      const TimeAxis& axis, const std::vector<traces::CriticalPath>& paths);
  void paint_flows(const PaintTarget& target, const Run& run, const RowLayout& layout,
                   const TimeAxis& axis, const PaintOptions& options, PaintStats& stats);

  std::vector<Box> boxes_;
  std::vector<Box> hover_boxes_;
  std::vector<uint32_t> flows_;
  std::vector<ColumnShare> shares_;
};

ImU32 darker(ImU32 c, float factor);

// The critical path's highlight: magenta, a colour no activity uses.
inline constexpr ImU32 kCriticalColor = IM_COL32(255, 64, 255, 255);

}  // namespace meshscope::gui
