// The data lines of a measurement tool's CSV file (csv_lines.h).
#include "kernels/cpu/csv_lines.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace meshscope::kernels {

std::vector<std::pair<int, std::string>> read_csv_lines(const std::string& path, int max_mib,
                                                        const std::string& header) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) ||
      std::filesystem::file_size(path, ec) > (uintmax_t(max_mib) << 20))
    throw std::runtime_error(path + ": not a regular file of at most " + std::to_string(max_mib) +
                             " MiB");
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<std::pair<int, std::string>> lines;
  std::string text;
  bool seen_header = false;
  for (int line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty() || text[0] == '#') continue;
    if (!seen_header) {
      if (text.rfind(header, 0) != 0)
        throw std::runtime_error(path + ":" + std::to_string(line) + ": want a header starting '" +
                                 header + "'");
      seen_header = true;
      continue;
    }
    lines.emplace_back(line, text);
  }
  return lines;
}

}  // namespace meshscope::kernels
