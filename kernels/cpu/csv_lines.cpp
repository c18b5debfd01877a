// The measurement CSV files' reader (csv_lines.h).
#include "kernels/cpu/csv_lines.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace meshscope::kernels {
namespace {

[[noreturn]] void bad(const std::string& path, int line, const std::string& why) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + why);
}

// Why `path` is no regular file to read: "not a regular file" where something is there,
// otherwise "no such file or folder" or stat's reason (a loop of links, a folder that cannot be
// searched), as traces::why_missing words it (kernels/cpu may not use traces).
std::string why_not_regular(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st)) return "not a regular file";
  if (ec && ec != std::errc::no_such_file_or_directory) return ec.message();
  return "no such file or folder";
}

}  // namespace

std::vector<std::string> split_csv_fields(const std::string& text) {
  std::vector<std::string> fields;
  std::istringstream s(text);
  for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
  if (!text.empty() && text.back() == ',') fields.emplace_back();
  return fields;
}

std::vector<CsvLine> read_csv_lines(const std::string& path, const CsvFormat& format) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(path + ": " + why_not_regular(path));
  if (std::filesystem::file_size(path, ec) > (uintmax_t(format.max_mib) << 20))
    throw std::runtime_error(path + ": larger than " + std::to_string(format.max_mib) +
                             " MiB, not " + format.what);
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  const auto shown = [&](const std::string& prefix, const std::string& text) {
    return format.quote ? prefix + "'" + format.quote(text) + "'" : std::string();
  };
  std::vector<CsvLine> lines;
  std::string text;
  size_t columns = 0;  // the header's: every line after it has as many
  for (int line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    // A byte-order mark is no part of the header: kept, it read "want X, got X", the mark unseen.
    if (line == 1 && text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> fields = split_csv_fields(text);
    if (columns == 0) {
      if (!text.starts_with(format.header))
        bad(path, line,
            "want " +
                (format.header_wanted.empty() ? "a header starting '" + format.header + "'"
                                              : format.header_wanted) +
                shown(", got ", text));
      columns = fields.size();
      continue;
    }
    if (fields.size() != columns)
      bad(path, line,
          std::to_string(fields.size()) + " fields where the header has " +
              std::to_string(columns) + shown(": ", text));
    lines.push_back({line, std::move(text), std::move(fields)});
  }
  return lines;
}

}  // namespace meshscope::kernels
