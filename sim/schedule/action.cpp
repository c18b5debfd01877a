// Text tokens of actions: to_string and the strict parser for "2F0", "0SEND_F1@3:4096", ...
#include "sim/schedule/action.h"

#include <limits>

#include "traces/printable.h"

namespace meshscope::schedule {
namespace {

std::optional<ActionKind> kind_of_token(std::string_view word) {
  for (size_t i = 0; i < kActionTokens.size(); ++i) {
    if (kActionTokens[i] == word) return static_cast<ActionKind>(i);
  }
  return std::nullopt;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

// Reads tokens left to right; each read_* consumes what it understood.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[pos_]; }
  std::string_view rest() const { return text_.substr(pos_); }
  void skip() { ++pos_; }

  // A non-negative decimal that fits in int64 and is <= max. Reports why it is not one.
  bool read_number(int64_t max, int64_t* out, std::string_view what, std::string* error) {
    if (peek() == '-')
      return fail(error, "negative " + std::string(what) + " in '" + whole() + "'");
    if (!is_digit(peek())) {
      return fail(error, "expected " + std::string(what) + " at '" + rest_quoted() + "' in '" +
                             whole() + "'");
    }
    int64_t value = 0;
    while (is_digit(peek())) {
      const int digit = peek() - '0';
      if (value > (max - digit) / 10) {
        return fail(error, std::string(what) + " out of range in '" + whole() + "'");
      }
      value = value * 10 + digit;
      skip();
    }
    *out = value;
    return true;
  }

  std::string_view read_word() {
    const size_t begin = pos_;
    while (is_word_char(peek())) skip();
    return text_.substr(begin, pos_ - begin);
  }

  // The token and its unread part as messages quote them: escaped and bounded (traces/printable.h).
  std::string whole() const { return traces::printable(text_); }
  std::string rest_quoted() const { return traces::printable(rest()); }

  static bool fail(std::string* error, std::string message) {
    if (error) *error = std::move(message);
    return false;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// "[@peer][:bytes]" for p2p, "[:bytes]" for collectives.
bool read_suffix(Cursor& c, bool allow_peer, Action* a, std::string* error) {
  int64_t value = 0;
  if (allow_peer && c.peek() == '@') {
    c.skip();
    if (!c.read_number(kMaxInt32, &value, "peer rank", error)) return false;
    a->peer = static_cast<int32_t>(value);
  }
  if (c.peek() == ':') {
    c.skip();
    if (!c.read_number(kMaxInt64, &value, "byte count", error)) return false;
    a->bytes = value;
  }
  return true;
}

bool read_group(Cursor& c, Action* a, std::string* error) {
  if (c.peek() != '(') {
    return Cursor::fail(error, "collective needs a group like '(dp)' in '" + c.whole() + "'");
  }
  c.skip();
  const std::string_view group = c.read_word();
  const std::optional<mesh::GroupKind> kind = mesh::parse_group_kind(group);
  if (!kind || !is_schedule_group(*kind)) {
    return Cursor::fail(error, std::string(kind ? "group '" : "unknown group '") +
                                   traces::printable(group) +
                                   (kind ? "' is the moe blocks' own, not a schedule's" : "'") +
                                   " (expected world, dp, pp or tp) in '" + c.whole() + "'");
  }
  if (c.peek() != ')') return Cursor::fail(error, "missing ')' in '" + c.whole() + "'");
  c.skip();
  a->group = *kind;
  return true;
}

}  // namespace

std::string to_string(const Action& a) {
  std::string out = std::to_string(a.stage);
  out += token(a.kind);
  if (is_compute(a.kind) || is_p2p(a.kind)) out += std::to_string(a.microbatch);
  if (is_collective(a.kind)) {
    out += '(';
    out += mesh::name(a.group);
    out += ')';
  }
  if (is_p2p(a.kind) && a.peer >= 0) out += "@" + std::to_string(a.peer);
  if ((is_p2p(a.kind) || is_collective(a.kind)) && a.bytes > 0) {
    out += ":" + std::to_string(a.bytes);
  }
  return out;
}

std::optional<Action> parse_action(std::string_view text, std::string* error) {
  Cursor c(text);
  Action a;
  int64_t value = 0;
  if (text.empty()) {
    Cursor::fail(error, "empty action");
    return std::nullopt;
  }
  if (!c.read_number(kMaxInt32, &value, "stage", error)) return std::nullopt;
  a.stage = static_cast<int32_t>(value);
  const std::string_view word = c.read_word();
  const std::optional<ActionKind> kind = kind_of_token(word);
  if (!kind) {
    Cursor::fail(error, word.empty() ? "missing action kind after the stage in '" + c.whole() + "'"
                                     : "unknown action '" + traces::printable(word) + "' in '" +
                                           c.whole() + "'");
    return std::nullopt;
  }
  a.kind = *kind;
  if (is_compute(a.kind) || is_p2p(a.kind)) {
    if (!c.read_number(kMaxInt32, &value, "microbatch", error)) return std::nullopt;
    a.microbatch = static_cast<int32_t>(value);
  }
  if (is_collective(a.kind) && !read_group(c, &a, error)) return std::nullopt;
  if ((is_p2p(a.kind) || is_collective(a.kind)) && !read_suffix(c, is_p2p(a.kind), &a, error)) {
    return std::nullopt;
  }
  if (!c.done()) {
    Cursor::fail(error, "unexpected '" + c.rest_quoted() + "' at the end of '" + c.whole() + "'");
    return std::nullopt;
  }
  return a;
}

}  // namespace meshscope::schedule
