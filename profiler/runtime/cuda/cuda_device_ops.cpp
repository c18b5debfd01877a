// CudaDeviceOps: every call enqueues on the rank's compute stream; host waits poll so an abort
// (watchdog, failed peer, NCCL error) ends them.
#include "profiler/runtime/cuda/cuda_device_ops.h"

#include "kernels/cuda/check.h"

namespace meshscope::runtime::cuda {

namespace kc = kernels::cuda;

CudaDeviceOps::CudaDeviceOps(cudaStream_t compute, cudaMemPool_t pool, const AbortState& abort,
                             HealthCheck check)
    : ctx_(compute), pool_(pool), abort_(abort), check_(std::move(check)) {}

void CudaDeviceOps::check_abort() const {
  if (abort_.aborted()) abort_.throw_aborted();
}

void* CudaDeviceOps::allocate(size_t bytes) {
  check_abort();
  void* p = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes == 0 ? 1 : bytes, pool_, stream()));
  return p;
}

void CudaDeviceOps::deallocate(void* p) noexcept {
  MESHSCOPE_CUDA_WARN(cudaFreeAsync(p, stream()));
}

void CudaDeviceOps::upload(void* dst, const void* host_src, size_t bytes) {
  check_abort();
  // From pageable memory the runtime stages the source before returning, so it may be reused.
  if (bytes > 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream()));
  }
}

void CudaDeviceOps::download(void* host_dst, const void* src, size_t bytes) {
  // Wait abortably first: a copy into pageable memory would block the host until it ran.
  wait_stream(stream(), abort_, check_);
  if (bytes > 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream()));
    MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }
}

void CudaDeviceOps::copy(void* dst, const void* src, size_t bytes) {
  check_abort();
  if (bytes > 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream()));
  }
}

void CudaDeviceOps::zero(void* dst, size_t bytes) {
  check_abort();
  if (bytes > 0) MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream()));
}

void CudaDeviceOps::synchronize() {
  wait_stream(stream(), abort_, check_);
  ctx_.check_labels();
}

void CudaDeviceOps::gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                         const float* a, int lda, const float* b, int ldb, float beta, float* c,
                         int ldc) {
  check_abort();
  kc::gemm(ctx_, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void CudaDeviceOps::bias_activation_forward(Activation act, int rows, int cols, const float* bias,
                                            float* pre, float* out) {
  check_abort();
  kc::bias_activation_forward(ctx_, act, rows, cols, bias, pre, out);
}

void CudaDeviceOps::activation_backward(Activation act, int rows, int cols, const float* pre,
                                        const float* grad_out, float* grad_pre) {
  check_abort();
  kc::activation_backward(ctx_, act, rows, cols, pre, grad_out, grad_pre);
}

void CudaDeviceOps::bias_grad(int rows, int cols, const float* grad, float beta, float* db) {
  check_abort();
  kc::bias_grad(ctx_, rows, cols, grad, beta, db);
}

void CudaDeviceOps::softmax_cross_entropy(int rows, int classes, const float* logits,
                                          const int32_t* labels, float scale, float* grad_logits,
                                          double* loss_accum) {
  check_abort();
  kc::softmax_cross_entropy_accumulate(ctx_, rows, classes, logits, labels, scale, grad_logits,
                                       loss_accum);
}

void CudaDeviceOps::mse(size_t n, const float* pred, const float* target, float scale, float* grad,
                        double* loss_accum) {
  check_abort();
  kc::mse_accumulate(ctx_, n, pred, target, scale, grad, loss_accum);
}

void CudaDeviceOps::sgd(size_t n, float lr, float* param, const float* grad) {
  check_abort();
  kc::sgd(ctx_, n, lr, param, grad);
}

void CudaDeviceOps::axpy(size_t n, float alpha, const float* x, float* y) {
  check_abort();
  kc::axpy(ctx_, n, alpha, x, y);
}

void CudaDeviceOps::fill(size_t n, float value, float* x) {
  check_abort();
  kc::fill(ctx_, n, value, x);
}

void CudaDeviceOps::softmax_rows(int rows, int cols, const float* logits, float* probs) {
  check_abort();
  kc::softmax_rows(ctx_, rows, cols, logits, probs);
}

void CudaDeviceOps::top_k_route(int tokens, int experts, int k, int capacity, const float* probs,
                                int32_t* dest, float* gate) {
  check_abort();
  kc::top_k_route(ctx_, tokens, experts, k, capacity, probs, dest, gate);
}

void CudaDeviceOps::moe_dispatch(int tokens, int k, int cols, int buffer_rows, const float* x,
                                 const int32_t* dest, float* buffer) {
  check_abort();
  kc::moe_dispatch(ctx_, tokens, k, cols, buffer_rows, x, dest, buffer);
}

void CudaDeviceOps::moe_combine(int tokens, int k, int cols, const float* buffer,
                                const int32_t* dest, const float* gate, float* y) {
  check_abort();
  kc::moe_combine(ctx_, tokens, k, cols, buffer, dest, gate, y);
}

void CudaDeviceOps::moe_combine_backward(int tokens, int k, int cols, int buffer_rows,
                                         const float* dy, const float* buffer, const int32_t* dest,
                                         const float* gate, float* d_buffer, float* d_gate) {
  check_abort();
  kc::moe_combine_backward(ctx_, tokens, k, cols, buffer_rows, dy, buffer, dest, gate, d_buffer,
                           d_gate);
}

void CudaDeviceOps::router_backward(int tokens, int experts, int k, int capacity,
                                    const float* probs, const int32_t* dest, const float* d_gate,
                                    float* d_logits) {
  check_abort();
  kc::router_backward(ctx_, tokens, experts, k, capacity, probs, dest, d_gate, d_logits);
}

}  // namespace meshscope::runtime::cuda
