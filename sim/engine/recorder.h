// Collects when each op ran (two integers per op, nothing else per event) and builds the Timeline
// afterwards, walking ranks in order: spans come out sorted by (device, lane, begin) without a
// global sort, and the activation counters are derived from the compute order.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/program.h"
#include "traces/timeline.h"

namespace meshscope::engine {

// Lanes every simulated device has, in this order; overlapping receives get extra "recv N" lanes.
enum class SimLane : uint16_t { kCompute = 0, kSend = 1, kRecv = 2, kCollective = 3, kCount };

class Recorder {
 public:
  Recorder(const EngineInput& input, const Program& program, bool enabled);

  bool enabled() const { return enabled_; }
  void record(uint32_t op, int64_t begin_ns, int64_t end_ns) {
    times_[2 * static_cast<size_t>(op)] = begin_ns;
    times_[2 * static_cast<size_t>(op) + 1] = end_ns;
  }

  // Length of the union of rank r's activity (every op's [begin, end)): traces::analyze's busy
  // time of that device, without building a Timeline.
  int64_t busy_ns(int rank) const;

  // Builds the Timeline; the recorder is spent afterwards.
  traces::Timeline finish(int64_t step_end_ns);

 private:
  const EngineInput& input_;
  const Program& program_;
  bool enabled_;
  std::vector<int64_t, HugePageAllocator<int64_t>> times_;  // begin, end per op
};

}  // namespace meshscope::engine
