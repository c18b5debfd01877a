// `meshscope predict --config FILE --sensitivity`: the step time with each figure of the hardware
// catalog entry moved by +-N% alone (sim/predict/sensitivity.h), as a table.
#pragma once

#include <string>

#include "cli/number_text.h"
#include "sim/predict/sensitivity.h"

namespace meshscope::cli {

// Figures that move the step less than this share are listed by name only.
inline constexpr double kSensitivityNoticeable = 0.0005;

// The table, largest change first, with each figure's source clause (cut to fit a line).
std::string format_sensitivity(const predict::Sensitivity& s);

}  // namespace meshscope::cli
