#include "cli/number_text.h"

#include <cstdio>

namespace meshscope::cli {

std::string fmt(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

std::string tflops_text(double tflops) { return fmt(tflops < 0.95 ? "%.2g" : "%.1f", tflops); }

std::string mfu_percent_text(double mfu) {
  return fmt(mfu < 0.0095 ? "%.2g%%" : "%.1f%%", 100 * mfu);
}

}  // namespace meshscope::cli
