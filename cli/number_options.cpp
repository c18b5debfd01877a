// check_number_syntax: see number_options.h.
#include "cli/number_options.h"

#include <cstdlib>
#include <string>

namespace meshscope::cli {
namespace {

bool is_whole_number(const std::string& text) {
  size_t i = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

CLI::Validator number_syntax(bool whole) {
  return CLI::Validator(
      [whole](std::string& text) -> std::string {
        if (text.empty()) return "an empty value is no number";
        if (whole && !is_whole_number(text)) return "'" + text + "' is not a whole number";
        // CLI11's own word for it had been "Could not convert: --timeout = abc".
        char* end = nullptr;
        std::strtod(text.c_str(), &end);
        if (!whole && (end == text.c_str() || *end != '\0')) return "'" + text + "' is no number";
        return {};
      },
      "");
}

}  // namespace

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const double s = std::strtod(text.c_str(), nullptr);
        return s > 0 && s < 1e9 ? "" : "a number of seconds above 0 (and under 1e9), got " + text;
      },
      "");
}

void check_number_syntax(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    const bool whole = type.starts_with("INT") || type.starts_with("UINT");
    if (whole || type.starts_with("FLOAT")) option->transform(number_syntax(whole));
  }
  for (CLI::App* command : app.get_subcommands({})) check_number_syntax(*command);
}

}  // namespace meshscope::cli
