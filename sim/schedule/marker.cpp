// Kept torch markers and OVERLAP_F_B groups: their tokens and strict parsers.
#include "sim/schedule/marker.h"

#include <cstdio>

namespace meshscope::schedule {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads a non-negative int32 at `*pos`; false when there is none or it overflows.
bool read_int(std::string_view s, size_t* pos, int32_t* out) {
  if (*pos >= s.size() || !is_digit(s[*pos])) return false;
  int64_t v = 0;
  while (*pos < s.size() && is_digit(s[*pos])) {
    v = v * 10 + (s[*pos] - '0');
    if (v > INT32_MAX) return false;
    ++*pos;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

}  // namespace

std::string quote_token(std::string_view token) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < token.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += token.size() > kMax ? "'..." : "'";
  return out;
}

std::string to_string(const Marker& m) {
  if (m.kind == MarkerKind::kIdle) return {};
  std::string out = std::to_string(m.stage);
  out += token(m.kind);
  if (has_microbatch(m.kind)) out += std::to_string(m.microbatch);
  return out;
}

std::optional<Marker> parse_marker(std::string_view text, std::string* error) {
  size_t pos = 0;
  Marker m;
  if (!read_int(text, &pos, &m.stage)) {
    fail(error, "expected a stage number at the start of " + quote_token(text));
    return std::nullopt;
  }
  size_t end = pos;
  while (end < text.size() && !is_digit(text[end])) ++end;
  const std::string_view word = text.substr(pos, end - pos);
  for (size_t k = 1; k < kMarkerTokens.size(); ++k) {
    if (kMarkerTokens[k] != word) continue;
    m.kind = static_cast<MarkerKind>(k);
    pos = end;
    if (has_microbatch(m.kind) && !read_int(text, &pos, &m.microbatch)) {
      fail(error, "expected a microbatch after " + std::string(word) + " in " + quote_token(text));
      return std::nullopt;
    }
    if (pos != text.size()) {
      fail(error,
           "unexpected " + quote_token(text.substr(pos)) + " at the end of " + quote_token(text));
      return std::nullopt;
    }
    return m;
  }
  fail(error, "unknown action " + quote_token(word) + " in " + quote_token(text));
  return std::nullopt;
}

std::string overlap_to_string(std::span<const Action> group) {
  std::string out = "(";
  for (size_t i = 0; i < group.size(); ++i) {
    if (i > 0) out += ';';
    Action a = group[i];
    a.overlap_next = false;
    out += to_string(a);
  }
  out += ')';
  out += kOverlapToken;
  return out;
}

std::optional<std::vector<Action>> parse_overlap(std::string_view text, std::string* error) {
  const size_t close = text.find(')');
  if (text.empty() || text[0] != '(' || close == std::string_view::npos) {
    fail(error, "expected '(a;b)OVERLAP_F_B', got " + quote_token(text));
    return std::nullopt;
  }
  if (text.substr(close + 1) != kOverlapToken) {
    fail(error, "unknown group kind " + quote_token(text.substr(close + 1)) + " in " +
                    quote_token(text) + " (expected OVERLAP_F_B)");
    return std::nullopt;
  }
  std::vector<Action> group;
  std::string_view inner = text.substr(1, close - 1);
  while (true) {
    const size_t semi = inner.find(';');
    const std::string_view part = inner.substr(0, semi);
    std::string why;
    const std::optional<Action> a = parse_action(part, &why);
    if (!a) {
      fail(error, why + " (in " + quote_token(text) + ")");
      return std::nullopt;
    }
    if (!is_compute(a->kind)) {
      fail(error, "OVERLAP_F_B groups compute actions (F, B, I, W), not " + quote_token(part));
      return std::nullopt;
    }
    group.push_back(*a);
    if (semi == std::string_view::npos) break;
    inner = inner.substr(semi + 1);
  }
  if (group.size() < 2) {
    fail(error, "OVERLAP_F_B needs at least two actions in " + quote_token(text));
    return std::nullopt;
  }
  for (size_t i = 0; i + 1 < group.size(); ++i) group[i].overlap_next = true;
  return group;
}

}  // namespace meshscope::schedule
