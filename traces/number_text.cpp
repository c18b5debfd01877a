// format_seconds.
#include "traces/number_text.h"

#include <cstdio>

namespace meshscope::traces {

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace meshscope::traces
