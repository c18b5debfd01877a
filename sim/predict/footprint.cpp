// Estimating a simulation's host memory before building it.
#include "sim/predict/footprint.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "sim/engine/program.h"
#include "sim/model/stage_cost.h"
#include "sim/model/workload.h"
#include "sim/schedule/action.h"
#include "traces/timeline.h"

namespace meshscope::predict {

double schedule_actions(double ranks, double microbatches, double virtual_stages) {
  // Per chunk and step: up to 4 collectives (ZeRO's gathers and reductions, dp all-reduce) + STEP.
  return ranks * virtual_stages * (7 * microbatches + 5);
}

double bytes_per_action(bool timeline) {
  // The schedule's vector grows by doubling (up to 2x its size), the engine copies nothing else
  // per action beyond its state byte and its place in a send or collective list: 77 bytes, above
  // the 57 measured (peak RSS 353 MB for 6.06 M actions: `/usr/bin/time -f %M
  // build/bench/sim_predict_bench --benchmark_filter=BM_Predict16k/replicas_once:0`, 2026-12-01).
  const double b = 2.0 * sizeof(schedule::Action) + sizeof(engine::Op) + 1 + sizeof(int32_t);
  return timeline ? b + sizeof(traces::Span) : b;
}

double gpt_layer_bytes() { return 32.0 * sizeof(model::OpCost); }

double mlp_layer_bytes() {
  return sizeof(model::Unit) + 2.0 * sizeof(model::LinearSpec) + 2 * sizeof(model::OpCost);
}

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
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v) || v <= 0) return -1;
  const std::string unit(end);
  if (unit.empty()) return v;
  if (unit.size() != 1) return -1;
  const std::string units = "KMGT";
  const size_t u = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
  if (u == std::string::npos) return -1;
  return v * std::pow(1024.0, static_cast<double>(u + 1));
}

MemoryBudget host_memory() {
  MemoryBudget b;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  // Unknown: a TB, beyond which nothing here runs.
  b.bytes = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e12;
  b.source = "this machine has " + bytes_text(b.bytes);
  const auto lower = [&b](double limit, const std::string& what) {
    if (limit > 0 && limit < b.bytes) {
      b.bytes = limit;
      b.source = what + " " + bytes_text(limit);
    }
  };
  // cgroup v1 says "no limit" with a huge number (about 8 EiB), which `lower` passes over.
  lower(cgroup_limit("/sys/fs/cgroup/memory.max"), "its cgroup (memory.max) allows");
  lower(cgroup_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
        "its cgroup (memory.limit_in_bytes) allows");
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    lower(static_cast<double>(as.rlim_cur), "its address-space limit (ulimit -v) is");
  if (const char* env = std::getenv("MESHSCOPE_MEMORY_LIMIT")) {
    const double limit = parse_memory_limit(env);
    if (limit < 0)
      throw std::runtime_error(std::string("MESHSCOPE_MEMORY_LIMIT=\"") + env +
                               "\": must be a number of bytes, or one with K, M, G or T "
                               "(4G: 4 GiB)");
    lower(limit, "MESHSCOPE_MEMORY_LIMIT allows");
  }
  return b;
}

double host_memory_bytes() { return host_memory().bytes; }

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char b[32];
  std::snprintf(b, sizeof b, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return b;
}

}  // namespace meshscope::predict
