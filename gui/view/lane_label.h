// Lane labels that fit the label column: a thread's name before its id, shortened in the middle
// when it must be (`pt_..._thread`), never cut into a prefix (`pt_main_t`), and the nesting band
// (`+3`) always kept, so every row's label stays distinct and readable.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace meshscope::gui {

// Width of a text in pixels (ImGui::CalcTextSize in the app; a fixed advance in the tests).
using TextWidth = std::function<float(std::string_view)>;

// The label for band `depth` of lane `lane_name` that fits `max_px`: the full name if it fits,
// else Kineto's "thread 2910249 (pt_main_thread)" as "pt_main_thread 2910249", the name
// shortened in the middle with ".." before the id ("pt_m..ead 2910249"), then without the id.
// Bands after the first end in " +depth". `deepest`, the lane's last band: every band of the lane
// takes the form that fits the widest suffix, " +deepest", so one lane's labels read alike
// ("thread 31149 (python) +9" above "python 31149 +10" had read as two threads).
std::string fit_lane_label(std::string_view lane_name, int depth, float max_px,
                           const TextWidth& width, int deepest = 0);

}  // namespace meshscope::gui
