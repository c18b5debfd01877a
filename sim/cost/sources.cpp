#include "sim/cost/sources.h"

#include <cctype>

#include <nlohmann/json.hpp>

namespace meshscope::cost {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// `word` occurs in `text` with no letter, digit or '_' on either side; with `whole`, and no '.'
// after it either (the section "efficiency" itself, not "efficiency.gemm_max").
bool names(std::string_view text, std::string_view word, bool whole = false) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    const bool open_after =
        end == text.size() || (!word_char(text[end]) && !(whole && text[end] == '.'));
    if ((at == 0 || !word_char(text[at - 1])) && open_after) return true;
  }
  return false;
}

// A source line's parts, one per figure it speaks of: split at "; ", a clause that starts with
// a key ("collective_efficiency 0.78 = ...", "efficiency.attention_flash3 0.5: ...") starts a
// part, any other clause ("0.5 for forward+backward is an assumption") belongs to the part
// before it.
std::vector<std::string> parts_of(const std::string& line) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= line.size()) {
    size_t at = line.find("; ", from);
    if (at == std::string::npos) at = line.size();
    const std::string clause = line.substr(from, at - from);
    const std::string first = clause.substr(0, clause.find_first_of(" :,="));
    const bool starts_with_key = !first.empty() &&
                                 std::islower(static_cast<unsigned char>(first[0])) &&
                                 first.find_first_of("_.") != std::string::npos;
    if (out.empty() || starts_with_key)
      out.push_back(clause);
    else
      out.back() += "; " + clause;
    from = at + 2;
  }
  return out;
}

// What a part says it is about: its text before the first ':' or '=' (all of it if neither).
std::string lead(const std::string& part) { return part.substr(0, part.find_first_of(":=")); }

}  // namespace

std::string source_clause(const std::vector<std::string>& sources, std::string_view key) {
  const size_t dot = key.find('.');
  const std::string_view section = dot == std::string_view::npos ? "" : key.substr(0, dot);
  const std::string_view leaf = dot == std::string_view::npos ? key : key.substr(dot + 1);
  // A part led by the whole key.
  for (const std::string& line : sources)
    for (const std::string& p : parts_of(line))
      if (names(lead(p), key)) return p;
  // In a line with a part about the key's section ("intra_node: NVLink 3, ...;
  // collective_efficiency 0.78 = ..."), the part led by the key's last part.
  std::string section_part;
  if (!section.empty()) {
    for (const std::string& line : sources) {
      const std::vector<std::string> parts = parts_of(line);
      for (const std::string& p : parts) {
        if (!names(lead(p), section)) continue;
        for (const std::string& q : parts)
          if (names(lead(q), leaf)) return q;
        // A part led by the section itself ("intra_node: ...", "elementwise_passes, softmax: ...")
        // speaks for all its figures; one led by a figure of it ("efficiency.gemm_max 0.865")
        // only for that figure.
        if (section_part.empty() && names(lead(p), section, true)) section_part = p;
      }
    }
  }
  // A part led by the last part ("latency_ns: ..." for both tiers); the section's own part
  // (its bandwidth, and what it says of the tier as a whole); one naming the whole key anywhere
  // (the last part alone, a word like "attention", would match prose).
  for (const std::string& line : sources)
    for (const std::string& p : parts_of(line))
      if (names(lead(p), leaf)) return p;
  if (!section_part.empty()) return section_part;
  for (const std::string& line : sources)
    for (const std::string& p : parts_of(line))
      if (names(p, key)) return p;
  return "";
}

std::vector<std::pair<std::string, nlohmann::json>> file_figures(const nlohmann::json& file) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (const auto& [key, value] : file.items()) {
    if (key == "name" || key == "description" || key == "kind" || key == "sources" ||
        key == "residuals")
      continue;
    if (value.is_object()) {
      for (const auto& [inner, v] : value.items()) out.emplace_back(key + "." + inner, v);
    } else {
      out.emplace_back(key, value);
    }
  }
  return out;
}

}  // namespace meshscope::cost
