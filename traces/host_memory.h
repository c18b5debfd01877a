// How much memory this process may use, to refuse an input-driven allocation with an estimate
// before it happens rather than end in std::bad_alloc or the OOM killer.
#pragma once

#include <optional>
#include <string>

namespace meshscope::traces {

// The most memory this process may use, and what sets it: the least of the machine's physical
// memory (sysconf), the cgroup's limit (cgroup v2 memory.max or v1 memory.limit_in_bytes: a
// container's `docker run --memory`), the address-space limit (`ulimit -v`), and
// $MESHSCOPE_MEMORY_LIMIT (bytes, or a number with K, M, G or T for KiB...TiB). The first three
// are read once per process, the variable at every call. Throws std::runtime_error naming the
// variable when $MESHSCOPE_MEMORY_LIMIT is malformed.
struct MemoryLimit {
  double bytes = 0;
  std::string source;  // "this machine has 24.0 GiB", "its cgroup (memory.max) allows 4.0 GiB"
  bool set = false;    // a limit below the machine's memory applies
};
MemoryLimit memory_limit();

// Reads $MESHSCOPE_MEMORY_LIMIT's form: "4294967296", "512M", "4G", "1.5T". Returns a negative
// number for anything else (which memory_limit() reports instead of ignoring).
double parse_memory_limit(const std::string& text);

// MemAvailable from /proc/meminfo, lowered to memory_limit(); the limit alone where MemAvailable
// cannot be read; nullopt where neither says anything (callers then refuse nothing).
std::optional<double> available_memory_bytes();

}  // namespace meshscope::traces
