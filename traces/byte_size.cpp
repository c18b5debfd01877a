// format_bytes.
#include "traces/byte_size.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace meshscope::traces {

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double magnitude = std::fabs(bytes);
  size_t unit = 0;
  while (magnitude >= 1024 && unit + 1 < std::size(kUnits)) {
    magnitude /= 1024;
    ++unit;
  }
  const double value = std::signbit(bytes) ? -magnitude : magnitude;
  char buf[48];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return buf;
}

}  // namespace meshscope::traces
