// Numbers as messages write them and as inputs give them, beside the other formatters of the
// traces library: format_duration (analysis.h) for spans' nanoseconds, format_bytes (byte_size.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace meshscope::traces {

// One number through a printf format ("%.1f GiB", "%.9g"): the tables' and the CSVs' figures.
std::string format_number(const char* format, double v);

// "5 s", "0.25 s", "1e+06 s": printf's %g, the figure as the user gave it (--timeout, a wait).
std::string format_seconds(double s);

// The whole of `text` as an int64_t, as std::from_chars reads it: decimal digits with an optional
// '-' (no '+', no spaces, nothing after them); nullopt for an empty text, anything else, or a
// value past int64_t. For numbers a trace's metadata holds (rank, world_size, base_time_ns);
// parsers with a narrower rule (no sign, a range, spaces) keep their own.
std::optional<int64_t> parse_whole_int(std::string_view text);

}  // namespace meshscope::traces
