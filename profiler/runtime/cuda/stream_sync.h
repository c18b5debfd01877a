// Ordering between a rank's streams, and host waits that an abort can interrupt (a stream stuck
// behind a hung transfer must not hold its host thread forever).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "kernels/cuda/raii.h"
#include "profiler/runtime/abort_state.h"

namespace meshscope::runtime::cuda {

// Makes later work on `to` wait for the work issued so far on `from`. One event, re-recorded each
// time: cudaStreamWaitEvent captures the record it sees when called, so reuse is safe.
class StreamLink {
 public:
  StreamLink() : event_(kernels::cuda::make_event()) {}
  void order(cudaStream_t from, cudaStream_t to);
  cudaEvent_t event() const { return event_.get(); }

 private:
  kernels::cuda::Event event_;
};

// Called between polls, also once an abort was set (to release what the wait depends on, e.g.
// abort NCCL communicators); throws to stop the wait (e.g. after an asynchronous NCCL error).
using HealthCheck = std::function<void()>;

// Waits until `stream` has run everything issued to it. Throws Aborted once `abort` is set and
// whatever `check` throws. Polls: spins briefly, then sleeps in short steps.
void wait_stream(cudaStream_t stream, const AbortState& abort, const HealthCheck& check = {});

}  // namespace meshscope::runtime::cuda
