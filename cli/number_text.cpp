#include "cli/number_text.h"

#include <cstdio>

namespace meshscope::cli {

std::string fmt(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

}  // namespace meshscope::cli
