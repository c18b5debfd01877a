// Numbers as messages write them and as inputs give them, beside the other formatters of the
// traces library: format_duration (analysis.h) for spans' nanoseconds, format_bytes (byte_size.h).
#pragma once

#include <string>

namespace meshscope::traces {

// "5 s", "0.25 s", "1e+06 s": printf's %g, the figure as the user gave it (--timeout, a wait).
std::string format_seconds(double s);

}  // namespace meshscope::traces
