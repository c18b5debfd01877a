// A process group on the cpu backend: members meet, the last to arrive reduces or gathers every
// member's buffer (in group order, so all members get bitwise the same result), all copy it out;
// an all-to-all copies each member's block straight from the sender's buffer.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/transport.h"
#include "profiler/runtime/work_in_flight.h"
#include "sim/mesh/mesh.h"
#include "traces/collective.h"

namespace meshscope::runtime {

class CpuGroup {
 public:
  // `work` counts the sums and copies it makes for blocked members (the watchdog's progress).
  CpuGroup(mesh::GroupKind kind, std::vector<int> ranks, const AbortState& abort,
           WorkInFlight& work);

  // `member` is the caller's index in the group. all-reduce: src == dst allowed, count floats.
  // all-gather: count floats in, count * size out. reduce-scatter: count * size in, count out.
  // all-to-all: count * size in, count * size out (Transport::all_to_all).
  TransferInfo run(traces::CollectiveOp op, int member, const float* src, float* dst, size_t count);
  void wake();
  int size() const { return static_cast<int>(ranks_.size()); }
  const std::vector<int>& ranks() const { return ranks_; }

 private:
  void combine();  // called by the last member to arrive, with the lock held

  mesh::GroupKind kind_;
  std::vector<int> ranks_;
  const AbortState& abort_;
  WorkInFlight& work_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  int arrived_ = 0;
  traces::CollectiveOp op_ = traces::CollectiveOp::kAllReduce;
  size_t count_ = 0;
  std::string mismatch_;  // non-empty: members disagreed on the call now being gathered
  // The last completed collective's mismatch, for its members that wake after the next one has
  // begun (and cleared or set mismatch_): it stays until every member arrives at the next.
  std::string done_mismatch_;
  std::vector<const float*> inputs_;
  std::vector<float> result_;
  int64_t ready_ns_ = 0;
};

}  // namespace meshscope::runtime
