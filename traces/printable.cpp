// printable(): escaping and truncation of input quoted in messages.
#include "traces/printable.h"

namespace meshscope::traces {

std::string printable(std::string_view bytes, size_t max_bytes) {
  size_t keep = bytes.size();
  if (keep > max_bytes) {
    keep = max_bytes;
    // Back up over UTF-8 continuation bytes so the cut lands on a character boundary.
    while (keep > 0 && (static_cast<unsigned char>(bytes[keep]) & 0xC0) == 0x80) --keep;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(keep + 16);
  for (size_t i = 0; i < keep; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (keep < bytes.size()) out += "... (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

}  // namespace meshscope::traces
