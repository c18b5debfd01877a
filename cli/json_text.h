// JSON printed or written by a command.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace meshscope::cli {

// `j` as text, indented by `indent` (-1: one line). Bytes that are not UTF-8 (a file name from the
// command line, a kernel name read from SQLite) become U+FFFD instead of failing the dump:
// `analyze --json` of a file named with such a byte was refused with the JSON library's message.
inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace meshscope::cli
