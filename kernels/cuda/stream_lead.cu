// The spin that leads a timed batch (stream_lead.h).
#include "kernels/cuda/check.h"
#include "kernels/cuda/stream_lead.h"

namespace meshscope::kernels::cuda {
namespace {

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_for(uint64_t ns) {
  const uint64_t until = global_ns() + ns;
  while (global_ns() < until) __nanosleep(1000);
}

}  // namespace

void queue_stream_lead(cudaStream_t stream, uint64_t ns) {
  spin_for<<<1, 1, 0, stream>>>(ns);
  MESHSCOPE_CUDA_CHECK(cudaGetLastError());
}

}  // namespace meshscope::kernels::cuda
