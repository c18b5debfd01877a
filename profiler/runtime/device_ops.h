// The math and memory of one rank's device, behind an interface: the cpu backend runs it
// synchronously on host memory, the cuda backends enqueue it on the rank's compute stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/cpu/ops.h"

namespace meshscope::runtime {

using kernels::Activation;

// Contract (every backend):
// - Threading: a rank's DeviceOps is used by that rank's host thread only (the one that called
//   Backend::attach_thread(rank)), never concurrently. Different ranks run concurrently.
// - Ordering: calls are stream-ordered. Work issued on a rank runs in issue order, and every
//   Transport call of the same rank is ordered after the DeviceOps work issued before it and
//   before the work issued after it (the backend inserts the event waits between its streams).
//   The host may return before the work ran (cuda); on the cpu backend it has run on return.
// - Pointers: "device pointers" come from allocate() of the same rank (or of a peer for backends
//   that allow peer access internally); host pointers are ordinary memory. On the cpu backend the
//   two coincide, which code must not rely on: always upload/download.
// - Ownership: allocate() hands out memory the caller owns until deallocate() (use DeviceBuffer).
//   Buffers passed to an op must stay allocated until the op ran (synchronize() before freeing
//   memory that queued work still uses; deallocate itself may be stream-ordered).
// - Errors: invalid arguments and device failures throw std::runtime_error (or a subclass) with
//   what and where; asynchronous device failures surface at the next synchronize()/download().
//   After Backend::abort() calls may throw runtime::Aborted.
class DeviceOps {
 public:
  virtual ~DeviceOps() = default;

  // --- Memory -------------------------------------------------------------------------------
  // At least 64-byte aligned, uninitialised. Throws std::bad_alloc or std::runtime_error.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  // host -> device. The host source may be reused as soon as the call returns.
  virtual void upload(void* dst, const void* host_src, size_t bytes) = 0;
  // device -> host. Blocks until the data is on the host (waits for the work issued before it).
  virtual void download(void* host_dst, const void* src, size_t bytes) = 0;
  // device -> device on the same rank; regions must not overlap.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  virtual void zero(void* dst, size_t bytes) = 0;
  // Host waits until every piece of work this rank issued (math, copies, transfers) has run.
  virtual void synchronize() = 0;

  // --- Math: the contracts of kernels/cpu/ops.h, on device pointers --------------------------
  virtual void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                    int lda, const float* b, int ldb, float beta, float* c, int ldc) = 0;
  virtual void bias_activation_forward(Activation act, int rows, int cols, const float* bias,
                                       float* pre, float* out) = 0;
  virtual void activation_backward(Activation act, int rows, int cols, const float* pre,
                                   const float* grad_out, float* grad_pre) = 0;
  virtual void bias_grad(int rows, int cols, const float* grad, float beta, float* db) = 0;
  // As kernels::cpu, but the loss is added to a device scalar instead of being returned, so the
  // host never waits on a loss mid-step: *loss_accum += scale * sum_r loss_r.
  // (Labels out of range: the cpu backend throws; a GPU backend may report it at synchronize().)
  virtual void softmax_cross_entropy(int rows, int classes, const float* logits,
                                     const int32_t* labels, float scale, float* grad_logits,
                                     double* loss_accum) = 0;
  virtual void mse(size_t n, const float* pred, const float* target, float scale, float* grad,
                   double* loss_accum) = 0;
  virtual void sgd(size_t n, float lr, float* param, const float* grad) = 0;
  virtual void axpy(size_t n, float alpha, const float* x, float* y) = 0;
  virtual void fill(size_t n, float value, float* x) = 0;

  // --- Mixture-of-experts routing (kernels/cpu/ops.h); dest is device memory of int32 --------
  // (k > experts or capacity < 1: the cpu backend throws; a GPU backend checks on the host.)
  virtual void softmax_rows(int rows, int cols, const float* logits, float* probs) = 0;
  virtual void top_k_route(int tokens, int experts, int k, int capacity, const float* probs,
                           int32_t* dest, float* gate) = 0;
  virtual void moe_dispatch(int tokens, int k, int cols, int buffer_rows, const float* x,
                            const int32_t* dest, float* buffer) = 0;
  virtual void moe_combine(int tokens, int k, int cols, const float* buffer, const int32_t* dest,
                           const float* gate, float* y) = 0;
  virtual void moe_combine_backward(int tokens, int k, int cols, int buffer_rows, const float* dy,
                                    const float* buffer, const int32_t* dest, const float* gate,
                                    float* d_buffer, float* d_gate) = 0;
  virtual void router_backward(int tokens, int experts, int k, int capacity, const float* probs,
                               const int32_t* dest, const float* d_gate, float* d_logits) = 0;
};

// Move-only owner of one allocation on one rank's device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceOps& ops, size_t bytes) : ops_(&ops), bytes_(bytes) {
    if (bytes > 0) ptr_ = ops.allocate(bytes);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ops_(std::exchange(o.ops_, nullptr)),
        ptr_(std::exchange(o.ptr_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = std::exchange(o.ops_, nullptr);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() noexcept {
    if (ptr_ != nullptr) ops_->deallocate(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  DeviceOps* ops_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace meshscope::runtime
