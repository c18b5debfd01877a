// Binds the what-if view to the simulator.
#include "gui/app/predictor.h"

namespace meshscope::gui {

std::optional<Predictor> make_predictor() { return std::nullopt; }

}  // namespace meshscope::gui
