// How much memory this machine can still give the process, to refuse an input-driven allocation
// with an estimate before it happens rather than end in std::bad_alloc or the OOM killer.
#pragma once

#include <optional>
#include <string>

namespace meshscope::traces {

// MemAvailable from /proc/meminfo, lowered to the cgroup's memory.max when one is set; nullopt
// where neither can be read (callers then refuse nothing).
std::optional<double> available_memory_bytes();

// "1.5 GiB", "820.0 MiB", "12 B"
std::string format_bytes(double bytes);

}  // namespace meshscope::traces
