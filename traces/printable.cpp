// printable(): escaping and truncation of input quoted in messages.
#include "traces/printable.h"

namespace meshscope::traces {

namespace {

// The length of the well-formed UTF-8 sequence `s` begins with (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0; 0 too for a C1 control, which a terminal acts on.
size_t utf8_length(std::string_view s) {
  const auto at = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = at(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    if (c == 0xC2) lo = 0xA0;  // U+0080..U+009F are the C1 controls (0x9B: a terminal's CSI)
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((at(k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view bytes, size_t max_bytes) {
  size_t keep = bytes.size();
  if (keep > max_bytes) {
    keep = max_bytes;
    // Back up to the start of a character the cut would split (at most 3 bytes: a character is 4
    // at most); stray continuation bytes are no character and are cut anywhere.
    for (size_t k = 1; k <= 3 && k <= keep; ++k) {
      if (utf8_length(bytes.substr(keep - k)) > k) {
        keep -= k;
        break;
      }
    }
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(keep + 16);
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  };
  for (size_t i = 0; i < keep;) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x20 || c == 0x7f) {
      escape(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t n = utf8_length(bytes.substr(i, keep - i)); n > 0) {
      out.append(bytes.data() + i, n);
      i += n;
    } else {
      escape(c);  // not UTF-8 (a binary file's bytes): a terminal would show garbage or act on it
      ++i;
    }
  }
  if (keep < bytes.size()) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

}  // namespace meshscope::traces
