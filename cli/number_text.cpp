#include "cli/number_text.h"

namespace meshscope::cli {

std::string tflops_text(double tflops) {
  return format_number(tflops < 0.95 ? "%.2g" : "%.1f", tflops);
}

std::string mfu_percent_text(double mfu) {
  return format_number(mfu < 0.0095 ? "%.2g%%" : "%.1f%%", 100 * mfu);
}

}  // namespace meshscope::cli
