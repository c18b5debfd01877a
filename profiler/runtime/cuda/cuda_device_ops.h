// A rank's DeviceOps on a CUDA stream: stream-ordered memory from the rank's own pool
// (cudaMallocFromPoolAsync; kernels::cuda::make_device_pool says why not the default), the ops of
// kernels/cuda, waits that an abort interrupts. Created on the rank's own thread (attach_thread),
// after its device or green context is current, because the cuBLAS handle binds to it.
#pragma once

#include "kernels/cuda/ops.h"
#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/cuda/stream_sync.h"
#include "profiler/runtime/device_ops.h"

namespace meshscope::runtime::cuda {

class CudaDeviceOps final : public DeviceOps {
 public:
  // `pool` (not owned) serves allocate(); the backend keeps it alive longer than these ops.
  CudaDeviceOps(cudaStream_t compute, cudaMemPool_t pool, const AbortState& abort,
                HealthCheck check);

  kernels::cuda::Context& context() { return ctx_; }
  cudaStream_t stream() const { return ctx_.stream(); }
  cudaMemPool_t pool() const { return pool_; }

  void* allocate(size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void upload(void* dst, const void* host_src, size_t bytes) override;
  void download(void* host_dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void zero(void* dst, size_t bytes) override;
  void synchronize() override;

  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override;
  void bias_activation_forward(Activation act, int rows, int cols, const float* bias, float* pre,
                               float* out) override;
  void activation_backward(Activation act, int rows, int cols, const float* pre,
                           const float* grad_out, float* grad_pre) override;
  void bias_grad(int rows, int cols, const float* grad, float beta, float* db) override;
  void softmax_cross_entropy(int rows, int classes, const float* logits, const int32_t* labels,
                             float scale, float* grad_logits, double* loss_accum) override;
  void mse(size_t n, const float* pred, const float* target, float scale, float* grad,
           double* loss_accum) override;
  void sgd(size_t n, float lr, float* param, const float* grad) override;
  void axpy(size_t n, float alpha, const float* x, float* y) override;
  void fill(size_t n, float value, float* x) override;
  void softmax_rows(int rows, int cols, const float* logits, float* probs) override;
  void top_k_route(int tokens, int experts, int k, int capacity, const float* probs, int32_t* dest,
                   float* gate) override;
  void moe_dispatch(int tokens, int k, int cols, int buffer_rows, const float* x,
                    const int32_t* dest, float* buffer) override;
  void moe_combine(int tokens, int k, int cols, const float* buffer, const int32_t* dest,
                   const float* gate, float* y) override;
  void moe_combine_backward(int tokens, int k, int cols, int buffer_rows, const float* dy,
                            const float* buffer, const int32_t* dest, const float* gate,
                            float* d_buffer, float* d_gate) override;
  void router_backward(int tokens, int experts, int k, int capacity, const float* probs,
                       const int32_t* dest, const float* d_gate, float* d_logits) override;

 private:
  void check_abort() const;

  kernels::cuda::Context ctx_;
  cudaMemPool_t pool_;
  const AbortState& abort_;
  HealthCheck check_;
};

}  // namespace meshscope::runtime::cuda
