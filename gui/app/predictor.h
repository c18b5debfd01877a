// The simulator behind the what-if view, when this build has one.
#pragma once

#include <optional>

#include "gui/view/whatif.h"

namespace meshscope::gui {

// The predictor over meshscope's simulator; nullopt when the simulator is not part of the build.
std::optional<Predictor> make_predictor();

}  // namespace meshscope::gui
