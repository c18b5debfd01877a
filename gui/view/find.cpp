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

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Glob with `*` only, both lower case.
bool glob(std::string_view text, std::string_view pattern) {
  size_t t = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == text[t]) {
      ++t;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The fields a bare word can name besides the span's name: its kind and its phase.
bool matches_field(const Span& s, std::string_view w) {
  if (w == traces::name(s.kind)) return true;
  if (s.phase == traces::Phase::kNone) return false;
  static constexpr std::string_view kPhaseLetters = "-fbiwo";  // by Phase
  static_assert(kPhaseLetters.size() == static_cast<size_t>(traces::Phase::kCount));
  return w == traces::name(s.phase) ||
         (w.size() == 1 && w[0] == kPhaseLetters[static_cast<size_t>(s.phase)]);
}

}  // namespace

bool matches_word(std::string_view name, std::string_view word) {
  size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && !word_char(name[i])) ++i;
    size_t j = i;
    while (j < name.size() && word_char(name[j])) ++j;
    if (j > i && glob(lower(name.substr(i, j - i)), word)) return true;
    i = j;
  }
  return false;
}

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
    if (tok == "stage" && k + 1 < tokens.size() && parse_int(tokens[k + 1])) {
      q.stage = parse_int(tokens[++k]);
      continue;
    }
    if (tok.starts_with("stage=") && parse_int(std::string_view(tok).substr(6))) {
      q.stage = parse_int(std::string_view(tok).substr(6));
      continue;
    }
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
  // Match each word against each distinct name once (a bit per word and name), then scan the
  // spans: a word holds when the name has it or the span's kind or phase is it.
  const size_t nw = std::min<size_t>(q.words.size(), 64);
  std::vector<uint64_t> name_words(t.strings.size(), 0);
  for (uint32_t id = 0; id < t.strings.size(); ++id) {
    const std::string_view name = t.strings.get(id);
    for (size_t w = 0; w < nw; ++w) {
      if (matches_word(name, q.words[w])) name_words[id] |= uint64_t{1} << w;
    }
  }
  auto words_hold = [&](const Span& s) {
    for (size_t w = 0; w < nw; ++w) {
      if (!(name_words[s.name] >> w & 1) && !matches_field(s, q.words[w])) return false;
    }
    return true;
  };
  const bool wants_idle = std::find(q.words.begin(), q.words.end(), "idle") != q.words.end();
  const size_t start = out.size();
  bool whole = true;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (q.microbatch && s.microbatch != *q.microbatch) continue;
    if (q.stage && s.stage != *q.stage) continue;
    if (!words_hold(s)) continue;
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
