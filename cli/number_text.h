// One number through a printf format ("%.1f GiB"): the tables of predict and catalog share it.
#pragma once

#include <string>

namespace meshscope::cli {

std::string fmt(const char* format, double v);

// A TFLOP/s rate and an MFU (a fraction) as predict's table and simulate's line print them: one
// decimal ("312.4", "48.2%"), or two significant digits where that would show 0.0 (a CPU's).
std::string tflops_text(double tflops);
std::string mfu_percent_text(double mfu);

}  // namespace meshscope::cli
