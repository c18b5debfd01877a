// Reading configuration files: JSON with every error located (file, byte, key), and where a
// relative --config path is looked for.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "sim/predict/config.h"

#ifndef MESHSCOPE_SOURCE_ROOT
#define MESHSCOPE_SOURCE_ROOT ""
#endif

namespace meshscope::predict {

using nlohmann::json;

namespace {

// The byte offset and dotted key where `text` first nests deeper than kMaxConfigDepth.
std::optional<std::pair<size_t, std::string>> too_deep_text(const std::string& text) {
  std::vector<std::string> keys;  // per open level: its latest key ("" in a list)
  std::string str;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\') {
        ++i;
      } else if (ch == '"') {
        in_string = false;
      } else if (str.size() < 64) {
        str += ch;
      }
      continue;
    }
    if (ch == '"') {
      in_string = true;
      str.clear();
    } else if (ch == ':' && !keys.empty()) {
      keys.back() = str;
    } else if (ch == '{' || ch == '[') {
      if (static_cast<int>(keys.size()) >= kMaxConfigDepth) {
        std::string dotted;
        for (const std::string& k : keys)
          if (!k.empty()) dotted += (dotted.empty() ? "" : ".") + k;
        return std::make_pair(i, dotted);
      }
      keys.emplace_back();
    } else if ((ch == '}' || ch == ']') && !keys.empty()) {
      keys.pop_back();
    }
  }
  return std::nullopt;
}

// nlohmann's DOM builder, told where the parser failed: a number beyond a double's range
// (1e999) raises out_of_range, which carries no position of its own.
class PositionedDomParser : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  explicit PositionedDomParser(json& result) : json_sax_dom_parser(result, false) {}
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    byte = position;
    this->token = token;
    out_of_range = std::is_same_v<Exception, nlohmann::detail::out_of_range>;
    (void)ex;
    return false;
  }
  std::size_t byte = 0;
  std::string token;
  bool out_of_range = false;
};

}  // namespace

json load_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error(path + ": is a directory, not a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const auto deep = too_deep_text(text))
    throw std::runtime_error(
        path + ": " + (deep->second.empty() ? "" : "key '" + shortened_key(deep->second) + "': ") +
        "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels at byte " +
        std::to_string(deep->first));
  json result;
  PositionedDomParser sax(result);
  if (!json::sax_parse(text, &sax)) {
    if (sax.out_of_range)
      throw std::runtime_error(path + ": number '" + sax.token.substr(0, 40) +
                               "' out of range at byte " + std::to_string(sax.byte));
    throw std::runtime_error(path + ": malformed JSON at byte " + std::to_string(sax.byte));
  }
  return result;
}

std::string resolve_config_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, ec)) return path;
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("MESHSCOPE_CONFIGS")) {
    std::stringstream ss(env);
    std::string d;
    while (std::getline(ss, d, ':'))
      if (!d.empty()) roots.emplace_back(d);
  }
  const fs::path source = MESHSCOPE_SOURCE_ROOT;
  if (!source.empty()) {
    roots.push_back(source);  // "sim/predict/configs/x.json" as the README writes it
    roots.push_back(source / "sim" / "predict" / "configs");  // "x.json", "cpu/A-....json"
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    roots.push_back(exe.parent_path() / "configs");
    roots.push_back(exe.parent_path().parent_path() / "share" / "meshscope" /
                    "configs");  // installed
  }
  for (const fs::path& r : roots)
    if (fs::is_regular_file(r / path, ec)) return (r / path).string();
  return path;
}

}  // namespace meshscope::predict
