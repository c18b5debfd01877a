// The host clock every tracer and transport stamps with: CLOCK_MONOTONIC in nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

namespace meshscope::runtime {

// Monotonic host time in ns (std::chrono::steady_clock, CLOCK_MONOTONIC on Linux). CUPTI's own
// timestamps are on another clock; profiler/capture/cupti/clock_sync.h maps them onto this one.
// Cheap (vDSO, ~20 ns): safe on the per-action hot path.
inline int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace meshscope::runtime
