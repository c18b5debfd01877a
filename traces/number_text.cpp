// format_number, format_seconds, parse_whole_int.
#include "traces/number_text.h"

#include <charconv>
#include <cstdio>

namespace meshscope::traces {

std::string format_number(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

std::string format_seconds(double s) { return format_number("%g s", s); }

std::optional<int64_t> parse_whole_int(std::string_view text) {
  int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace meshscope::traces
