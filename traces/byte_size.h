// A byte count as people read it, in binary units, for messages and tables alike.
#pragma once

#include <string>

namespace meshscope::traces {

// "512 B", "1.5 KiB", "820.0 MiB", "79.2 GiB", "9.5 TiB": whole bytes below 1 KiB, else one
// decimal in the largest binary unit (up to EiB) that leaves at least 1; a negative count keeps
// its sign ("-1.5 KiB"). Takes a double so a 2^60-byte estimate and a byte count alike format.
std::string format_bytes(double bytes);

}  // namespace meshscope::traces
