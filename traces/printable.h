// Untrusted bytes made fit for a one-line message: control bytes escaped, length bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace meshscope::traces {

// Bytes from an input file or argument as they may appear inside an error message: control bytes
// (below 0x20, 0x7f, NUL included; the C1 controls U+0080..U+009F) and bytes that are not
// well-formed UTF-8 (a binary file's) become \xNN, so nothing reaches the terminal that it would
// act on, and the text is cut after about `max_bytes` input bytes with "... (N bytes)" appended,
// so a 10 MB token yields a short line. Cuts never split a UTF-8 character. Its output is printable
// text: a second pass escapes nothing more (it may cut it, with a bound below its length).
//   printable("a\x1b[2Jb") == "a\\x1b[2Jb"
std::string printable(std::string_view bytes, size_t max_bytes = 80);

}  // namespace meshscope::traces
