#include "cli/read_progress.h"

#include <cstdio>

namespace meshscope::cli {

namespace {

// Bytes as a person reads them: "850.3 MB", "4.2 GB".
std::string amount(int64_t bytes) {
  char text[32];
  if (bytes < 1000000000)
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  else
    std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace

traces::ImportOptions options_reporting_progress(const std::string& command) {
  traces::ImportOptions options;
  options.on_progress = [command](const std::string& file, int64_t read, int64_t size,
                                  double seconds) {
    if (size > 0)
      std::fprintf(stderr, "%s: %s: %s of %s read (%.0f%%), %.0f s\n", command.c_str(),
                   file.c_str(), amount(read).c_str(), amount(size).c_str(),
                   100.0 * static_cast<double>(read) / static_cast<double>(size), seconds);
    else  // a pipe: no size
      std::fprintf(stderr, "%s: %s: %s read, %.0f s\n", command.c_str(), file.c_str(),
                   amount(read).c_str(), seconds);
    std::fflush(stderr);
  };
  return options;
}

}  // namespace meshscope::cli
