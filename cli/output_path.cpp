// output_file_check: traces::check_output_path as a CLI11 validator.
#include "cli/output_path.h"

#include <exception>
#include <string>

#include "traces/atomic_file.h"

namespace meshscope::cli {

CLI::Validator output_file_check(DashMeans dash) {
  return CLI::Validator(
      [dash](std::string& path) -> std::string {
        if (dash == DashMeans::kStdout && path == "-") return {};
        try {
          traces::check_output_path(path);
        } catch (const std::exception& e) {
          return e.what();
        }
        return {};
      },
      "FILE");
}

}  // namespace meshscope::cli
