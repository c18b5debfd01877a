// Collects what the event loop produces (spans, flows, activation samples) with no per-event
// allocation beyond amortised vector growth, and turns it into a Timeline at the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/program.h"
#include "traces/timeline.h"

namespace meshscope::engine {

// Lanes every simulated device has, in this order; overlapping receives get extra "recv N" lanes.
enum class SimLane : uint16_t { kCompute = 0, kSend = 1, kRecv = 2, kCollective = 3 };

class Recorder {
 public:
  Recorder(const EngineInput& input, const Program& program, bool enabled);

  bool enabled() const { return enabled_; }
  // Returns the span's index (for flows).
  uint32_t span(int rank, SimLane lane, uint32_t op, int64_t begin_ns, int64_t end_ns);
  void flow(uint32_t from, uint32_t to) { flows_.push_back({from, to}); }
  void activation(int rank, int64_t t_ns, int64_t bytes);

  // Builds the Timeline (sorted by device, lane, begin); the recorder is spent afterwards.
  traces::Timeline finish(int64_t step_end_ns);

 private:
  uint32_t name_of(int rank, uint32_t op);

  const EngineInput& input_;
  const Program& program_;
  bool enabled_;
  int name_width_ = 1;
  std::vector<uint32_t> name_cache_;
  std::vector<traces::Span> spans_;
  std::vector<traces::Flow> flows_;
  std::vector<std::vector<traces::CounterSample>> samples_;
  traces::StringTable strings_;
};

}  // namespace meshscope::engine
