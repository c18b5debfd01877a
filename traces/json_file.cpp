// Reading hand-written JSON files with every error located: file, byte, line and column, key.
#include "traces/json_file.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "traces/input_file.h"
#include "traces/printable.h"

namespace meshscope::traces {
namespace {

using nlohmann::json;

// Assumption: the largest file read this way, a framework profile, is 13 KiB; a sweep written
// out by hand or a script stays far below 64 MiB, and /dev/zero is refused at it.
constexpr size_t kMaxJsonFileBytes = size_t{64} << 20;

// A key as an error names it: dotted from the outermost object, cut at 60 characters.
std::string dotted_key(const std::vector<std::string>& keys) {
  std::string dotted;
  for (const std::string& k : keys)
    if (!k.empty()) dotted += (dotted.empty() ? "" : ".") + k.substr(0, 64);
  // Keys are the file's bytes: control bytes escaped before they reach a terminal.
  return printable(dotted.size() <= 60 ? dotted : dotted.substr(0, 60) + "...", 200);
}

// What the structural scan found wrong, with the byte it is at.
struct ScanFault {
  size_t byte = 0;
  std::string message;  // without the file name
};

// One pass over the text before it is parsed, following strings and brackets only: refuses
// nesting deeper than `max_depth` (before a parser recurses into it) and a key given twice in one
// object. Keys are compared as written, escapes included ("\u006e" and "n" pass as two).
// Malformed text is left to the parser, which locates it better.
std::optional<ScanFault> scan_structure(const std::string& text, int max_depth) {
  struct Level {
    bool object;
    std::string key;                               // its latest key ("" in a list)
    std::unordered_map<std::string, size_t> seen;  // key -> byte of its opening quote
  };
  std::vector<Level> levels;
  std::string str;
  size_t str_start = 0;
  bool in_string = false;
  bool key_next = false;  // a string just ended: a ':' now makes it a key
  const auto keys = [&levels](const std::string& last) {
    std::vector<std::string> k;
    for (const Level& l : levels) k.push_back(l.key);
    if (!k.empty()) k.back() = last;
    return dotted_key(k);
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') {  // kept as written: "\n" and "n" are two keys
        str += ch;
        if (i + 1 < text.size()) str += text[++i];
      } else if (ch == '"') {
        in_string = false;
        key_next = true;
      } else {
        str += ch;
      }
      continue;
    }
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') continue;
    const bool key = key_next && ch == ':';
    key_next = false;  // malformed text (': :', '1:') is the parser's to report
    if (ch == '"') {
      in_string = true;
      str.clear();
      str_start = i;
    } else if (key && !levels.empty() && levels.back().object) {
      Level& level = levels.back();
      const auto [it, fresh] = level.seen.emplace(str, str_start);
      if (!fresh)
        return ScanFault{str_start, "key '" + keys(str) + "' given twice (bytes " +
                                        std::to_string(it->second) + " and " +
                                        std::to_string(str_start) + ")"};
      level.key = str;
    } else if (ch == '{' || ch == '[') {
      if (static_cast<int>(levels.size()) >= max_depth) {
        const std::string where = keys(levels.empty() ? "" : levels.back().key);
        return ScanFault{i, (where.empty() ? "" : "key '" + where + "': ") + "nested deeper than " +
                                std::to_string(max_depth) + " levels at byte " + std::to_string(i)};
      }
      levels.push_back(Level{ch == '{', "", {}});
    } else if ((ch == '}' || ch == ']') && !levels.empty()) {
      levels.pop_back();
    }
  }
  return std::nullopt;
}

// nlohmann's DOM builder, told where the parser failed and why: a number beyond a double's range
// (1e999) raises out_of_range, which carries no position of its own.
class PositionedDomParser : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  explicit PositionedDomParser(json& result) : json_sax_dom_parser(result, false) {}
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    end = position;
    this->token = token;
    out_of_range = std::is_same_v<Exception, nlohmann::detail::out_of_range>;
    // "[json.exception.parse_error.101] parse error at line 1, column 20: syntax error while
    // parsing value - unexpected end of input; expected ..." -> what follows the location.
    const std::string what = ex.what();
    const size_t column = what.find("column ");
    const size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
    reason = colon == std::string::npos ? what : what.substr(colon + 2);
    return false;
  }
  // The scan compares keys as written; here they are decoded, so "\u006e" and "n" meet too.
  using Base = nlohmann::detail::json_sax_dom_parser<json>;
  bool start_object(std::size_t n) {
    keys_.emplace_back();
    return Base::start_object(n);
  }
  bool end_object() {
    keys_.pop_back();
    return Base::end_object();
  }
  bool key(json::string_t& k) {
    if (!keys_.back().insert(k).second) {
      twice = k;
      return false;
    }
    return Base::key(k);
  }

  std::size_t end = 0;  // characters read when the parser stopped (past the offending one)
  std::string token;
  std::string reason;
  bool out_of_range = false;
  std::optional<std::string> twice;  // a key given twice, as decoded

 private:
  std::vector<std::unordered_set<std::string>> keys_;  // per open object
};

}  // namespace

void require_known_keys(const json& j, const std::vector<std::string_view>& known,
                        const std::string& where, const std::string& prefix) {
  if (!j.is_object())
    throw std::runtime_error(where + ": key '" +
                             (prefix.empty() ? "(top)" : prefix.substr(0, prefix.size() - 1)) +
                             "': must be an object");
  for (const auto& item : j.items()) {
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    std::string all;
    for (std::string_view k : known) all += (all.empty() ? "" : ", ") + std::string(k);
    throw std::runtime_error(where + ": key '" + prefix + printable(item.key(), 60) +
                             "': unknown key (known: " + all + ")");
  }
}

std::string line_and_column(const std::string& text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

json load_json_file(const std::string& path, std::string_view kind, int max_depth) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error(path + ": is a directory, not a " + std::string(kind));
  std::string why;
  std::optional<InputFile> in = InputFile::open(path, why);
  if (!in) throw std::runtime_error(path + ": cannot open " + std::string(kind) + ": " + why);
  const std::optional<std::string> text =
      in->read_all(kMaxJsonFileBytes, why,
                   "has more than the " + std::to_string(kMaxJsonFileBytes >> 20) + " MiB a " +
                       std::string(kind) + " may have");
  if (!text) throw std::runtime_error(path + ": " + why);
  // A trace given where hand-written JSON goes (`--calibration rank0.json.gz`) is binary: say what
  // it is, not where its bytes stop being JSON.
  const std::string what = std::string(kind);
  if (text->starts_with("\x1f\x8b"))
    throw std::runtime_error(path + ": is gzip-compressed, not a " + what + " (a " + what +
                             " is plain JSON; a compressed trace goes to analyze or calibrate)");
  if (text->starts_with(std::string_view("SQLite format 3\0", 16)))
    throw std::runtime_error(path + ": is an SQLite database (an Nsight Systems export?), not a " +
                             what);
  return parse_json_text(*text, path, max_depth);
}

json parse_json_text(const std::string& text, const std::string& path, int max_depth) {
  if (const auto fault = scan_structure(text, max_depth))
    throw std::runtime_error(path + ": " + fault->message);
  json result;
  PositionedDomParser sax(result);
  if (!json::sax_parse(text, &sax)) {
    if (sax.twice)
      throw std::runtime_error(path + ": key '" + printable(*sax.twice, 60) +
                               "' given twice (written with different escapes)");
    if (sax.out_of_range) {
      const size_t start = sax.end >= sax.token.size() ? sax.end - sax.token.size() : 0;
      throw std::runtime_error(path + ": number '" + sax.token.substr(0, 40) +
                               "' out of range at byte " + std::to_string(start));
    }
    const size_t byte = sax.end > 0 ? sax.end - 1 : 0;
    throw std::runtime_error(path + ": malformed JSON at byte " + std::to_string(byte) + " (" +
                             line_and_column(text, byte) + "): " + sax.reason);
  }
  return result;
}

}  // namespace meshscope::traces
