// A synthetic Kineto-like trace (PyTorch profiler layout, pretty-printed like Kineto writes it)
// of any size: the input of the import benchmark, of scale tests and of the fuzzers' seed corpus.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace meshscope::traces {

struct SyntheticKinetoOptions {
  int64_t iterations = 1000;  // each: CPU op, launches, kernels, flows, sometimes NCCL or memcpy
  int rank = 0;
  int world_size = 1;
  int64_t base_time_ns = 1'700'000'000'000'000'000;
  int64_t clock_offset_ns = 0;  // added to every ts: a skewed clock for multi-rank tests
  uint64_t seed = 1;
};

// What a generated trace holds, so tests can check an import against it.
struct SyntheticKinetoCounts {
  int64_t events = 0;
  int64_t kernels = 0;       // including NCCL kernels
  int64_t nccl_kernels = 0;  // all-reduces on the comm stream
  int64_t memcpys = 0;
  int64_t host_spans = 0;    // cpu_op + cuda_runtime + user_annotation
  int64_t launch_flows = 0;  // paired ac2g flows
  int64_t steps = 0;         // ProfilerStep#N annotations
};

// Streams the trace to `sink` in chunks (about 1 MiB); returns what it wrote.
SyntheticKinetoCounts write_synthetic_kineto(const SyntheticKinetoOptions& options,
                                             const std::function<void(std::string_view)>& sink);

}  // namespace meshscope::traces
