// Untrusted bytes made fit for a one-line message: control bytes escaped, length bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace meshscope::traces {

// Bytes from an input file or argument as they may appear inside an error message: control bytes
// (below 0x20, 0x7f, NUL included) and bytes that are not well-formed UTF-8 (a binary file's)
// become \xNN, so nothing reaches the terminal that it would act on, and the text is cut after
// about `max_bytes` input bytes with
// "... (N bytes)" appended, so a 10 MB token yields a short line. Cuts never split a UTF-8
// sequence. Applying it twice changes nothing more (a message built from printable() pieces may
// pass through it again as a last bound).
//   printable("a\x1b[2Jb") == "a\\x1b[2Jb"
std::string printable(std::string_view bytes, size_t max_bytes = 80);

}  // namespace meshscope::traces
