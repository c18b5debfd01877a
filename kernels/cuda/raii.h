// Move-only owners for CUDA streams, events, cuBLAS handles, memory pools and device memory (as
// nvbench's cuda_timer owns its events): every resource has exactly one owner and is released once.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/check.h"

namespace meshscope::kernels::cuda {

// Owns one handle of type H released by Release::operator(); empty when moved from.
template <typename H, typename Release>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(H h) : h_(h) {}
  UniqueHandle(UniqueHandle&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
  UniqueHandle& operator=(UniqueHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }
  void reset() {
    if (h_ != H{}) Release{}(std::exchange(h_, H{}));
  }
  H release() { return std::exchange(h_, H{}); }

 private:
  H h_{};
};

struct StreamRelease {
  void operator()(cudaStream_t s) const noexcept { MESHSCOPE_CUDA_WARN(cudaStreamDestroy(s)); }
};
struct EventRelease {
  void operator()(cudaEvent_t e) const noexcept { MESHSCOPE_CUDA_WARN(cudaEventDestroy(e)); }
};
struct CublasRelease {
  void operator()(cublasHandle_t h) const noexcept { cublasDestroy(h); }
};
struct MemPoolRelease {
  void operator()(cudaMemPool_t p) const noexcept { MESHSCOPE_CUDA_WARN(cudaMemPoolDestroy(p)); }
};
struct DeviceFree {
  void operator()(void* p) const noexcept { MESHSCOPE_CUDA_WARN(cudaFree(p)); }
};

using Stream = UniqueHandle<cudaStream_t, StreamRelease>;
using Event = UniqueHandle<cudaEvent_t, EventRelease>;
using CublasHandle = UniqueHandle<cublasHandle_t, CublasRelease>;
using MemPool = UniqueHandle<cudaMemPool_t, MemPoolRelease>;

// A non-blocking stream (does not synchronize with the legacy default stream).
Stream make_stream(int priority = 0);
// Events without timing are cheaper; timing ones back cudaEventElapsedTime.
Event make_event(bool timing = false);
CublasHandle make_cublas(cudaStream_t stream);
// A stream-ordered memory pool of its own on `device` (for cudaMallocFromPoolAsync), instead of
// the device's default pool, which every user of the device shares:
//  - release threshold UINT64_MAX: memory freed to the pool stays there across synchronisations
//    (the default pool's threshold is 0, so each step's synchronise would trim it and the next
//    step would pay for growing it again);
//  - no opportunistic or internal-dependency reuse: memory freed on one stream is reused on
//    another only after an event dependency the program made itself, so one user's frees never
//    insert waits into another's streams (cudaMemPoolReuseAllowInternalDependencies inserts
//    them). Stream-order reuse (cudaMemPoolReuseFollowEventDependencies) stays on.
MemPool make_device_pool(int device);

// `count` elements of T in device memory on the current device.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count == 0) return;
    void* p = nullptr;
    MESHSCOPE_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    mem_ = UniqueHandle<void*, DeviceFree>(p);
  }
  T* data() const { return static_cast<T*>(mem_.get()); }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  UniqueHandle<void*, DeviceFree> mem_;
  size_t count_ = 0;
};

}  // namespace meshscope::kernels::cuda
