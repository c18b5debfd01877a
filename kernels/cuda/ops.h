// The ops of kernels/cpu/ops.h on a CUDA device, with the same contracts (row-major, float32
// tensors, `ld*` row strides in elements); every pointer here is device memory and every op is
// enqueued on the Context's stream. GEMMs go through cuBLAS; the rest are this folder's kernels.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/raii.h"

namespace meshscope::kernels::cuda {

// How a GEMM multiplies: fp32 exactly, fp32 with TF32 tensor cores, or inputs rounded to bf16
// (accumulation and output stay fp32 in every mode, so the float32 contract holds).
enum class GemmPrecision : uint8_t { kFp32 = 0, kTf32 = 1, kBf16 = 2, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(GemmPrecision::kCount)>
    kGemmPrecisionNames = {"fp32", "tf32", "bf16"};
constexpr std::string_view name(GemmPrecision p) {
  return kGemmPrecisionNames[static_cast<size_t>(p)];
}
std::optional<GemmPrecision> parse_gemm_precision(std::string_view s);

// Where a loss kernel records labels outside [0, classes) (device memory, one per Context).
struct LabelCheck {
  int32_t has_bad_label;  // 1 once some label was out of range
  int32_t bad_label;      // the first such label seen
};

// One rank's math state: the stream ops go to (not owned), a cuBLAS handle bound to it, and
// scratch memory. Not thread-safe: one Context per host thread.
class Context {
 public:
  explicit Context(cudaStream_t stream, GemmPrecision precision = GemmPrecision::kFp32);

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_.get(); }
  // cuBLAS picks kernels for this many SMs instead of the whole GPU's (cublasSetSmCountTarget):
  // the SM share of a green context, whose kernels cannot run on more.
  void set_sm_count_target(int sms);
  GemmPrecision precision() const { return precision_; }
  void set_precision(GemmPrecision p) { precision_ = p; }

  // At least `bytes` of device scratch, stream-ordered: valid until the next scratch() call.
  void* scratch(size_t bytes);
  // The Context's own loss accumulator for the synchronous loss wrappers.
  double* loss_slot() const { return loss_.data(); }
  LabelCheck* label_check() const { return labels_.data(); }
  // Waits for the stream; throws std::out_of_range if a loss kernel saw a bad label since the
  // last check (and clears the record).
  void check_labels();
  // Waits for the stream, checks labels and returns *loss_slot().
  double read_loss();

 private:
  cudaStream_t stream_;
  CublasHandle cublas_;
  GemmPrecision precision_;
  DeviceBuffer<std::byte> scratch_;
  DeviceBuffer<double> loss_;
  DeviceBuffer<LabelCheck> labels_;
};

using kernels::Activation;

void gemm(Context& ctx, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
void bias_activation_forward(Context& ctx, Activation act, int rows, int cols, const float* bias,
                             float* pre, float* out);
void activation_backward(Context& ctx, Activation act, int rows, int cols, const float* pre,
                         const float* grad_out, float* grad_pre);
void bias_grad(Context& ctx, int rows, int cols, const float* grad, float beta, float* db);

// Asynchronous losses: *loss_accum (device) += scale * sum_r loss_r, on the stream, so the host
// never waits mid-step. Bad labels are recorded in ctx.label_check() (see check_labels).
void softmax_cross_entropy_accumulate(Context& ctx, int rows, int classes, const float* logits,
                                      const int32_t* labels, float scale, float* grad_logits,
                                      double* loss_accum);
void mse_accumulate(Context& ctx, size_t n, const float* pred, const float* target, float scale,
                    float* grad, double* loss_accum);
// Synchronous forms with the CPU contract: return the loss (waits for the stream).
double softmax_cross_entropy(Context& ctx, int rows, int classes, const float* logits,
                             const int32_t* labels, float scale, float* grad_logits);
double mse(Context& ctx, size_t n, const float* pred, const float* target, float scale,
           float* grad);

void sgd(Context& ctx, size_t n, float lr, float* param, const float* grad);
void axpy(Context& ctx, size_t n, float alpha, const float* x, float* y);
// out = sum_i inputs[i]; `inputs` is a host array of device pointers (peers' buffers on one GPU
// for the cuda-virtual collectives). out may alias inputs[0]. Needs only a stream (no cuBLAS
// handle), so a transport's comm stream runs it without a Context of its own.
void sum(cudaStream_t stream, size_t n, const float* const* inputs, int num_inputs, float* out);
inline void sum(Context& ctx, size_t n, const float* const* inputs, int num_inputs, float* out) {
  sum(ctx.stream(), n, inputs, num_inputs, out);
}
void fill(Context& ctx, size_t n, float value, float* x);

// Mixture-of-experts routing (moe.cu), kernels/cpu's contracts. top_k_route uses the Context's
// scratch for the choices and throws std::invalid_argument on the host for a k or capacity out of
// range.
void softmax_rows(Context& ctx, int rows, int cols, const float* logits, float* probs);
void top_k_route(Context& ctx, int tokens, int experts, int k, int capacity, const float* probs,
                 int32_t* dest, float* gate);
void moe_dispatch(Context& ctx, int tokens, int k, int cols, int buffer_rows, const float* x,
                  const int32_t* dest, float* buffer);
void moe_combine(Context& ctx, int tokens, int k, int cols, const float* buffer,
                 const int32_t* dest, const float* gate, float* y);
void moe_combine_backward(Context& ctx, int tokens, int k, int cols, int buffer_rows,
                          const float* dy, const float* buffer, const int32_t* dest,
                          const float* gate, float* d_buffer, float* d_gate);
void router_backward(Context& ctx, int tokens, int experts, int k, int capacity, const float* probs,
                     const int32_t* dest, const float* d_gate, float* d_logits);

// Rounds n floats to bf16 (round to nearest even); used by the bf16 GEMM.
void float_to_bf16(cudaStream_t stream, size_t n, const float* in, void* out_bf16);

}  // namespace meshscope::kernels::cuda
