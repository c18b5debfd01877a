// Numbers as predict's, catalog's and simulate's tables print them.
#pragma once

#include <string>

#include "traces/number_text.h"

namespace meshscope::cli {

// One number through a printf format ("%.1f GiB"): traces/number_text.h's, which
// sim/predict's sweep output shares.
using traces::format_number;

// A TFLOP/s rate and an MFU (a fraction) as predict's table and simulate's line print them: one
// decimal ("312.4", "48.2%"), or two significant digits where that would show 0.0 (a CPU's).
std::string tflops_text(double tflops);
std::string mfu_percent_text(double mfu);

}  // namespace meshscope::cli
