// available_memory_bytes and format_bytes.
#include "traces/host_memory.h"

#include <cstdio>
#include <exception>
#include <fstream>

namespace meshscope::traces {

std::optional<double> available_memory_bytes() {
  std::optional<double> available;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") available = kib * 1024;
  }
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  std::string limit;
  if (cgroup >> limit && limit != "max") {
    try {
      const double bytes = std::stod(limit);
      if (!available || bytes < *available) available = bytes;
    } catch (const std::exception&) {
      // an unreadable limit: MemAvailable alone
    }
  }
  return available;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace meshscope::traces
