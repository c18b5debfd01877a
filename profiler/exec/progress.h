// What each rank is doing right now, published for the watchdog with relaxed atomics (one cache
// line per rank, written only by its own thread).
#pragma once

#include <atomic>
#include <cstdint>

namespace meshscope::exec {

enum class RankState : uint8_t {
  kStarting = 0,
  kBarrier = 1,
  kRunning = 2,
  kDone = 3,
  kFailed = 4
};

struct alignas(64) RankProgress {
  std::atomic<uint64_t> ticks{0};   // bumped after every action and step boundary
  std::atomic<int32_t> action{-1};  // index of the action in progress
  std::atomic<int32_t> inner{-1};   // tp collective in progress inside it (InnerInfo index)
  // Inside a compute action: its math is progress however long it takes (a forward of a large
  // model on a CPU), except while it waits in an inner collective.
  std::atomic<bool> computing{false};
  std::atomic<int32_t> step{-1};
  std::atomic<RankState> state{RankState::kStarting};
};

}  // namespace meshscope::exec
