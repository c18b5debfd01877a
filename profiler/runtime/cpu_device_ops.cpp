// The cpu backend's device: host memory, kernels/cpu math, everything synchronous.
#include "profiler/runtime/cpu_device_ops.h"

#include <cstring>
#include <new>

namespace meshscope::runtime {
namespace {
constexpr std::align_val_t kAlignment{64};
}

void* CpuDeviceOps::allocate(size_t bytes) { return ::operator new(bytes, kAlignment); }
void CpuDeviceOps::deallocate(void* p) noexcept { ::operator delete(p, kAlignment); }

void CpuDeviceOps::upload(void* dst, const void* host_src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, host_src, bytes);
}
void CpuDeviceOps::download(void* host_dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(host_dst, src, bytes);
}
void CpuDeviceOps::copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}
void CpuDeviceOps::zero(void* dst, size_t bytes) {
  if (bytes > 0) std::memset(dst, 0, bytes);
}

void CpuDeviceOps::gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                        const float* a, int lda, const float* b, int ldb, float beta, float* c,
                        int ldc) {
  kernels::cpu::gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void CpuDeviceOps::bias_activation_forward(Activation act, int rows, int cols, const float* bias,
                                           float* pre, float* out) {
  kernels::cpu::bias_activation_forward(act, rows, cols, bias, pre, out);
}
void CpuDeviceOps::activation_backward(Activation act, int rows, int cols, const float* pre,
                                       const float* grad_out, float* grad_pre) {
  kernels::cpu::activation_backward(act, rows, cols, pre, grad_out, grad_pre);
}
void CpuDeviceOps::bias_grad(int rows, int cols, const float* grad, float beta, float* db) {
  kernels::cpu::bias_grad(rows, cols, grad, beta, db);
}
void CpuDeviceOps::softmax_cross_entropy(int rows, int classes, const float* logits,
                                         const int32_t* labels, float scale, float* grad_logits,
                                         double* loss_accum) {
  *loss_accum +=
      kernels::cpu::softmax_cross_entropy(rows, classes, logits, labels, scale, grad_logits);
}
void CpuDeviceOps::mse(size_t n, const float* pred, const float* target, float scale, float* grad,
                       double* loss_accum) {
  *loss_accum += kernels::cpu::mse(n, pred, target, scale, grad);
}
void CpuDeviceOps::sgd(size_t n, float lr, float* param, const float* grad) {
  kernels::cpu::sgd(n, lr, param, grad);
}
void CpuDeviceOps::axpy(size_t n, float alpha, const float* x, float* y) {
  kernels::cpu::axpy(n, alpha, x, y);
}
void CpuDeviceOps::fill(size_t n, float value, float* x) { kernels::cpu::fill(n, value, x); }

void CpuDeviceOps::softmax_rows(int rows, int cols, const float* logits, float* probs) {
  kernels::cpu::softmax_rows(rows, cols, logits, probs);
}
void CpuDeviceOps::top_k_route(int tokens, int experts, int k, int capacity, const float* probs,
                               int32_t* dest, float* gate) {
  kernels::cpu::top_k_route(tokens, experts, k, capacity, probs, dest, gate);
}
void CpuDeviceOps::moe_dispatch(int tokens, int k, int cols, int buffer_rows, const float* x,
                                const int32_t* dest, float* buffer) {
  kernels::cpu::moe_dispatch(tokens, k, cols, buffer_rows, x, dest, buffer);
}
void CpuDeviceOps::moe_combine(int tokens, int k, int cols, const float* buffer,
                               const int32_t* dest, const float* gate, float* y) {
  kernels::cpu::moe_combine(tokens, k, cols, buffer, dest, gate, y);
}
void CpuDeviceOps::moe_combine_backward(int tokens, int k, int cols, int buffer_rows,
                                        const float* dy, const float* buffer, const int32_t* dest,
                                        const float* gate, float* d_buffer, float* d_gate) {
  kernels::cpu::moe_combine_backward(tokens, k, cols, buffer_rows, dy, buffer, dest, gate, d_buffer,
                                     d_gate);
}
void CpuDeviceOps::router_backward(int tokens, int experts, int k, int capacity, const float* probs,
                                   const int32_t* dest, const float* d_gate, float* d_logits) {
  kernels::cpu::router_backward(tokens, experts, k, capacity, probs, dest, d_gate, d_logits);
}

}  // namespace meshscope::runtime
