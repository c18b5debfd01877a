// JSON text pieces for the streaming Chrome writer: escaped strings, exact numbers, µs from ns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace meshscope::traces::json_text {

// Appends `s` as a quoted JSON string. Control characters are escaped; byte sequences that are
// not valid UTF-8 become U+FFFD, so the output is always valid JSON.
void append_string(std::string& out, std::string_view s);

// `s` with every byte sequence that is not valid UTF-8 replaced by U+FFFD, as append_string
// writes it: importers of sources that do not check (SQLite text) keep what the export keeps.
std::string valid_utf8(std::string_view s);

void append_int(std::string& out, int64_t v);

// Shortest text that reads back as the same double. Caller guarantees a finite value.
void append_double(std::string& out, double v);

// Integer nanoseconds as microseconds with exactly three decimals, or none for a whole
// microsecond: 1234567 -> "1234.567", 1234000 -> "1234".
void append_us(std::string& out, int64_t ns);

}  // namespace meshscope::traces::json_text
