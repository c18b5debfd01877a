// The chunk buffer and the JSON token scanner: strings (SWAR scan, escapes, strict UTF-8),
// numbers (strict grammar, plus the NaN/Infinity that Python's json writes), bounded skipping.
#include "traces/import/json_reader.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshscope::traces::importer {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

inline uint64_t load8(const char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  return x;
}

// High bit set in the bytes that end the fast string scan: '"', '\\', < 0x20 (which includes the
// zero padding) and >= 0x80. Borrows can only flag bytes above a truly flagged one, so the lowest
// flagged byte is exact.
inline uint64_t string_stop_mask(uint64_t x) {
  const uint64_t q = x ^ (kOnes * '"');
  const uint64_t b = x ^ (kOnes * '\\');
  const uint64_t has_q = (q - kOnes) & ~q;
  const uint64_t has_b = (b - kOnes) & ~b;
  const uint64_t has_ctl = (x - kOnes * 0x20) & ~x;
  return (has_q | has_b | has_ctl | x) & kHighs;
}

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  const char l = static_cast<char>(c | 0x20);
  if (l >= 'a' && l <= 'f') return l - 'a' + 10;
  return -1;
}

size_t put_utf8(char* out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace

ChunkBuffer::ChunkBuffer(ByteSource& source, size_t chunk_bytes, int64_t max_unit_bytes)
    : source_(source),
      data_(new char[chunk_bytes + kPadding]),
      capacity_(chunk_bytes),
      max_unit_bytes_(max_unit_bytes) {
  std::memset(data_.get(), 0, kPadding);  // the empty buffer is all padding
}

bool ChunkBuffer::refill(const char*& keep) {
  const size_t keep_offset = static_cast<size_t>(keep - data_.get());
  if (eof_) return false;
  if (keep_offset == 0 && size_ == capacity_) {
    if (static_cast<int64_t>(capacity_) >= max_unit_bytes_) {
      throw std::length_error("unit larger than the limit");
    }
    const size_t grown = static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(capacity_) * 2, max_unit_bytes_));
    std::unique_ptr<char[]> bigger(new char[grown + kPadding]);
    std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = grown;
  } else if (keep_offset > 0) {
    std::memmove(data_.get(), data_.get() + keep_offset, size_ - keep_offset);
    size_ -= keep_offset;
    base_offset_ += static_cast<int64_t>(keep_offset);
  }
  const size_t got = source_.read(data_.get() + size_, capacity_ - size_);
  size_ += got;
  std::memset(data_.get() + size_, 0, kPadding);
  keep = data_.get();
  if (got == 0) eof_ = true;
  return got > 0;
}

JsonScanner::JsonScanner(ChunkBuffer& buffer, std::string file, int max_depth)
    : buffer_(buffer), file_(std::move(file)), max_depth_(max_depth), p_(buffer.data()) {
  on_refill();
}

void JsonScanner::on_refill() {
  // Unescaping never lengthens a string, so a unit's strings fit in one buffer's worth.
  if (arena_capacity_ < buffer_.capacity() + ChunkBuffer::kPadding) {
    arena_capacity_ = buffer_.capacity() + ChunkBuffer::kPadding;
    arena_.reset(new char[arena_capacity_]);
  }
  arena_used_ = 0;
}

void JsonScanner::fail(const char* at, const std::string& reason) const {
  if (at >= buffer_.end()) throw NeedMoreInput{};
  throw ImportError(file_, buffer_.offset_of(at), reason);
}

void JsonScanner::skip_ws() {
  for (;;) {
    const char c = *p_;
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      ++p_;
    } else {
      return;
    }
  }
}

void JsonScanner::expect(char c, const char* what) {
  skip_ws();
  if (*p_ != c) fail_here(std::string("expected ") + what);
  ++p_;
}

bool JsonScanner::consume_if(char c) {
  skip_ws();
  // At the end of the buffered bytes the answer is in the next chunk: "no" would send the caller
  // down the wrong branch (an empty array read as the start of an event).
  if (p_ >= buffer_.end()) throw NeedMoreInput{};
  if (*p_ != c) return false;
  ++p_;
  return true;
}

const char* JsonScanner::utf8_sequence(const char* s) const {
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  const unsigned lead = u[0];
  int len = 0;
  unsigned lo = 0x80, hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // beyond U+10FFFF
  } else {
    fail(s, "invalid UTF-8 in string");
  }
  if (u[1] < lo || u[1] > hi) fail(s + 1, "invalid UTF-8 in string");
  for (int i = 2; i < len; ++i) {
    if ((u[i] & 0xC0) != 0x80) fail(s + i, "invalid UTF-8 in string");
  }
  return s + len;
}

template <bool kStore>
std::string_view JsonScanner::string_impl() {
  const char* start = ++p_;
  for (;;) {
    const uint64_t m = string_stop_mask(load8(p_));
    if (m == 0) {
      p_ += 8;
      continue;
    }
    p_ += std::countr_zero(m) / 8;
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      std::string_view s(start, static_cast<size_t>(p_ - start));
      ++p_;
      return s;
    }
    if (c >= 0x80) {
      p_ = utf8_sequence(p_);
      continue;
    }
    if (c == '\\') break;
    fail_here("control character in string (or unterminated string)");
  }
  // Escapes: copy into the arena while decoding.
  char* out = kStore ? arena_.get() + arena_used_ : nullptr;
  size_t n = 0;
  auto put = [&](const char* src, size_t len) {
    if constexpr (kStore) std::memcpy(out + n, src, len);
    n += len;
  };
  put(start, static_cast<size_t>(p_ - start));
  for (;;) {
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      break;
    }
    if (c == '\\') {
      const char e = p_[1];
      char simple = 0;
      switch (e) {
        case '"':
          simple = '"';
          break;
        case '\\':
          simple = '\\';
          break;
        case '/':
          simple = '/';
          break;
        case 'b':
          simple = '\b';
          break;
        case 'f':
          simple = '\f';
          break;
        case 'n':
          simple = '\n';
          break;
        case 'r':
          simple = '\r';
          break;
        case 't':
          simple = '\t';
          break;
        case 'u':
          break;
        default:
          fail(p_ + 1, "invalid escape in string");
      }
      if (e != 'u') {
        put(&simple, 1);
        p_ += 2;
        continue;
      }
      auto hex4 = [&](const char* h) {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
          const int d = hex_value(h[i]);
          if (d < 0) fail(h + i, "invalid \\u escape in string");
          v = v * 16 + static_cast<uint32_t>(d);
        }
        return v;
      };
      uint32_t cp = hex4(p_ + 2);
      p_ += 6;
      if (cp >= 0xD800 && cp <= 0xDBFF && p_[0] == '\\' && p_[1] == 'u') {
        const uint32_t low = hex4(p_ + 2);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          p_ += 6;
        }
      }
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // a lone surrogate: not a character
      char tmp[4];
      put(tmp, put_utf8(tmp, cp));
      continue;
    }
    if (c >= 0x80) {
      const char* next = utf8_sequence(p_);
      put(p_, static_cast<size_t>(next - p_));
      p_ = next;
      continue;
    }
    if (c < 0x20) fail_here("control character in string (or unterminated string)");
    put(p_, 1);
    ++p_;
  }
  if constexpr (kStore) {
    arena_used_ += n;
    return std::string_view(out, n);
  }
  return {};
}

std::string_view JsonScanner::string() {
  skip_ws();
  if (*p_ != '"') fail_here("expected a string");
  return string_impl<true>();
}

void JsonScanner::literal(std::string_view word) {
  for (size_t i = 0; i < word.size(); ++i) {
    if (p_[i] != word[i]) fail(p_ + i, "invalid literal");
  }
  p_ += word.size();
}

std::string_view JsonScanner::number() {
  const char* s = p_;
  if (*p_ == '-') ++p_;
  if (*p_ == 'I') {
    literal("Infinity");
    return {s, static_cast<size_t>(p_ - s)};
  }
  if (*p_ == 'N' && p_ == s) {
    literal("NaN");
    return {s, 3};
  }
  if (*p_ == '0') {
    ++p_;
  } else if (is_digit(*p_)) {
    do ++p_;
    while (is_digit(*p_));
  } else {
    fail_here("invalid number");
  }
  if (*p_ == '.') {
    ++p_;
    if (!is_digit(*p_)) fail_here("invalid number: digit expected after '.'");
    do ++p_;
    while (is_digit(*p_));
  }
  if ((*p_ | 0x20) == 'e') {
    ++p_;
    if (*p_ == '+' || *p_ == '-') ++p_;
    if (!is_digit(*p_)) fail_here("invalid number: digit expected in exponent");
    do ++p_;
    while (is_digit(*p_));
  }
  if (p_ >= buffer_.end()) throw NeedMoreInput{};  // the number may go on in the next chunk
  return {s, static_cast<size_t>(p_ - s)};
}

JsonScalar JsonScanner::value_or_skip(int depth) {
  const char c = peek_after_ws();
  switch (c) {
    case '"':
      return {JsonType::kString, string_impl<true>()};
    case '{':
      skip_value(depth);
      return {JsonType::kObject, {}};
    case '[':
      skip_value(depth);
      return {JsonType::kArray, {}};
    case 't':
      literal("true");
      return {JsonType::kTrue, "true"};
    case 'f':
      literal("false");
      return {JsonType::kFalse, "false"};
    case 'n':
      literal("null");
      return {JsonType::kNull, "null"};
    default:
      if (c == '-' || c == 'N' || c == 'I' || is_digit(c)) return {JsonType::kNumber, number()};
      fail_here("expected a value");
  }
}

void JsonScanner::skip_value(int depth) {
  // Containers still open, innermost last. Bounded by max_depth, so no recursion and no blow-up.
  std::vector<char>& open = open_;
  open.clear();
  auto key = [&] {
    skip_ws();
    if (*p_ != '"') fail_here("expected a string key");
    string_impl<false>();
    expect(':', "':' after a key");
  };
  for (;;) {
    const char c = peek_after_ws();
    if (c == '{' || c == '[') {
      if (depth + static_cast<int>(open.size()) + 1 > max_depth_) {
        fail_here("nesting deeper than " + std::to_string(max_depth_) + " levels");
      }
      ++p_;
      const char close = c == '{' ? '}' : ']';
      if (peek_after_ws() == close) {
        ++p_;
      } else {
        open.push_back(c);
        if (c == '{') key();
        continue;
      }
    } else if (c == '"') {
      string_impl<false>();
    } else {
      value_or_skip(depth + static_cast<int>(open.size()));
    }
    // After a value: close finished containers, or move on to the next element.
    for (;;) {
      if (open.empty()) return;
      const char d = peek_after_ws();
      if (d == ',') {
        ++p_;
        if (open.back() == '{') key();
        break;
      }
      if (d == (open.back() == '{' ? '}' : ']')) {
        ++p_;
        open.pop_back();
        continue;
      }
      fail_here(open.back() == '{' ? "expected ',' or '}' in object"
                                   : "expected ',' or ']' in array");
    }
  }
}

bool micros_text_to_ns(std::string_view text, int64_t& ns) {
  const char* p = text.data();
  const char* e = p + text.size();
  bool neg = false;
  if (p < e && *p == '-') {
    neg = true;
    ++p;
  }
  if (p == e || !is_digit(*p)) return false;  // NaN, Infinity
  constexpr uint64_t kMaxMicros =
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1000 - 1);
  uint64_t whole = 0;
  for (; p < e && is_digit(*p); ++p) {
    whole = whole * 10 + static_cast<uint64_t>(*p - '0');
    if (whole > kMaxMicros) return false;
  }
  uint64_t frac = 0;
  int frac_digits = 0;
  bool round_up = false;
  if (p < e && *p == '.') {
    for (++p; p < e && is_digit(*p); ++p) {
      if (frac_digits < 3) {
        frac = frac * 10 + static_cast<uint64_t>(*p - '0');
      } else if (frac_digits == 3) {
        round_up = *p >= '5';
      }
      ++frac_digits;
    }
  }
  if (p < e) {  // an exponent: rare, take the floating-point road
    double v = 0;
    if (!number_text_to_double(text, v)) return false;
    const double scaled = std::round(v * 1000.0);
    if (!(std::fabs(scaled) < 9.2e18)) return false;
    ns = static_cast<int64_t>(scaled);
    return true;
  }
  for (int d = std::min(frac_digits, 3); d < 3; ++d) frac *= 10;
  const auto magnitude = static_cast<int64_t>(whole * 1000 + frac + (round_up ? 1 : 0));
  ns = neg ? -magnitude : magnitude;
  return true;
}

bool number_text_to_int(std::string_view text, int64_t& out) {
  const char* e = text.data() + text.size();
  const auto r = std::from_chars(text.data(), e, out);
  return r.ec == std::errc() && r.ptr == e;
}

bool number_text_to_double(std::string_view text, double& out) {
  if (text.empty()) return false;
  const char first = text[0] == '-' && text.size() > 1 ? text[1] : text[0];
  if (!is_digit(first)) return false;  // from_chars would take "nan" and "inf"
  const char* e = text.data() + text.size();
  const auto r = std::from_chars(text.data(), e, out);
  return r.ec == std::errc() && r.ptr == e && std::isfinite(out);
}

template std::string_view JsonScanner::string_impl<true>();
template std::string_view JsonScanner::string_impl<false>();

}  // namespace meshscope::traces::importer
