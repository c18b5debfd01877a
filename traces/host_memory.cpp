// memory_limit and available_memory_bytes.
#include "traces/host_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "traces/byte_size.h"

namespace meshscope::traces {
namespace {

// A cgroup file's limit in bytes; 0 when the file is absent, says "max" or holds no number.
double cgroup_limit(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return 0;
  char* end = nullptr;
  const double v = std::strtod(word.c_str(), &end);
  return end && *end == '\0' && v > 0 ? v : 0;
}

}  // namespace

double parse_memory_limit(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v <= 0) return -1;
  const std::string unit(end);
  if (unit.empty()) return v;
  if (unit.size() != 1) return -1;
  const std::string units = "KMGT";
  const size_t u = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
  if (u == std::string::npos) return -1;
  return v * std::pow(1024.0, static_cast<double>(u + 1));
}

namespace {

// The machine's, the cgroup's and the address-space limit, read once per process: reading them
// took 13 us a call (100,000 calls in a loop, 2026-12-03, the 2-core VM; 0.03 us cached), and
// every point of a sweep asks.
MemoryLimit system_memory_limit() {
  MemoryLimit m;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  // Unknown: a TB, beyond which nothing here runs.
  m.bytes = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e12;
  m.source = "this machine has " + format_bytes(m.bytes);
  const auto lower = [&m](double limit, const std::string& what) {
    if (limit > 0 && limit < m.bytes) {
      m.bytes = limit;
      m.source = what + " " + format_bytes(limit);
      m.set = true;
    }
  };
  // cgroup v1 says "no limit" with a huge number (about 8 EiB), which `lower` passes over.
  lower(cgroup_limit("/sys/fs/cgroup/memory.max"), "its cgroup (memory.max) allows");
  lower(cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
        "its cgroup (memory.limit_in_bytes) allows");
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    lower(static_cast<double>(as.rlim_cur), "its address-space limit (ulimit -v) is");
  return m;
}

}  // namespace

MemoryLimit memory_limit() {
  static const MemoryLimit system = system_memory_limit();
  MemoryLimit m = system;
  if (const char* env = std::getenv("MESHSCOPE_MEMORY_LIMIT")) {
    const double limit = parse_memory_limit(env);
    if (limit < 0)
      throw std::runtime_error(std::string("MESHSCOPE_MEMORY_LIMIT=\"") + env +
                               "\": must be a number of bytes, or one with K, M, G or T "
                               "(4G: 4 GiB)");
    if (limit < m.bytes) {
      m.bytes = limit;
      m.source = "MESHSCOPE_MEMORY_LIMIT allows " + format_bytes(limit);
      m.set = true;
    }
  }
  return m;
}

std::optional<double> available_memory_bytes() {
  std::optional<double> available;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") available = kib * 1024;
  }
  const MemoryLimit limit = memory_limit();
  if (limit.set) available = std::min(available.value_or(limit.bytes), limit.bytes);
  return available;
}

}  // namespace meshscope::traces
