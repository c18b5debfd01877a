// Stream links and abortable stream waits.
#include "profiler/runtime/cuda/stream_sync.h"

#include <chrono>
#include <thread>

#include "kernels/cuda/check.h"

namespace meshscope::runtime::cuda {

void StreamLink::order(cudaStream_t from, cudaStream_t to) {
  if (from == to) return;
  MESHSCOPE_CUDA_CHECK(cudaEventRecord(event_.get(), from));
  MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(to, event_.get(), 0));
}

void wait_stream(cudaStream_t stream, const AbortState& abort, const HealthCheck& check) {
  for (int polls = 0;; ++polls) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) MESHSCOPE_CUDA_CHECK(status);
    if (check) check();  // first: it may need to clean up (abort NCCL) when aborted
    if (abort.aborted()) abort.throw_aborted();
    // Most waits are short (the tail of a step): spin first, then stop burning the core.
    if (polls < 200) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace meshscope::runtime::cuda
