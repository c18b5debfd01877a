// The stats view: per-device stacked bars of where the step's time went (compute, overlap, comm,
// and the bubble split into warm-up, peer wait and cool-down), the overall bubble fraction and
// step time, and the largest idle gaps; clicking a gap jumps to it in the timeline.
#pragma once

#include "gui/app/session.h"

namespace meshscope::gui {

class StatsView {
 public:
  void draw(Session& session);
};

}  // namespace meshscope::gui
