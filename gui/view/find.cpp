// Query parsing and the span scan behind "find".
#include "gui/view/find.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace meshscope::gui {
namespace {

using traces::Span;
using traces::SpanKind;
using traces::Timeline;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

FindQuery parse_find_query(std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) tokens.push_back(lower(text.substr(i, j - i)));
    i = j;
  }
  FindQuery q;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const std::string& tok = tokens[k];
    std::optional<int> mb;
    if (tok == "mb" && k + 1 < tokens.size()) {
      mb = parse_int(tokens[k + 1]);
      if (mb) ++k;
    } else if (tok.starts_with("mb=")) {
      mb = parse_int(std::string_view(tok).substr(3));
    } else if (tok.starts_with("mb") && tok.size() > 2) {
      mb = parse_int(std::string_view(tok).substr(2));
    } else if (tok.starts_with("#") && tok.size() > 1) {
      mb = parse_int(std::string_view(tok).substr(1));
    }
    if (mb) {
      q.microbatch = mb;
    } else {
      q.words.push_back(tok == "bubble" ? "idle" : tok);
    }
  }
  return q;
}

bool find_spans(const Timeline& t, const FindQuery& q, size_t limit, std::vector<uint32_t>& out) {
  if (q.empty()) return true;
  // Match the words against each distinct name once, then scan spans by name index.
  std::vector<bool> name_matches(t.strings.size(), true);
  if (!q.words.empty()) {
    for (uint32_t id = 0; id < t.strings.size(); ++id) {
      const std::string name = lower(t.strings.get(id));
      for (const std::string& w : q.words) {
        if (name.find(w) == std::string::npos) {
          name_matches[id] = false;
          break;
        }
      }
    }
  }
  const bool wants_idle = std::find(q.words.begin(), q.words.end(), "idle") != q.words.end();
  const size_t start = out.size();
  bool whole = true;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (q.microbatch && s.microbatch != *q.microbatch) continue;
    if (!name_matches[s.name]) continue;
    if (s.kind == SpanKind::kIdle && !wants_idle) continue;
    if (out.size() - start == limit) {
      whole = false;
      break;
    }
    out.push_back(i);
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(start), out.end(),
            [&](uint32_t a, uint32_t b) {
              const Span& x = t.spans[a];
              const Span& y = t.spans[b];
              return x.begin_ns != y.begin_ns ? x.begin_ns < y.begin_ns : x.device < y.device;
            });
  return whole;
}

}  // namespace meshscope::gui
