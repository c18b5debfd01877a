// Elementwise kernels: bias + activation and its backward, SGD, axpy, fill, sum, bf16 rounding.
#include <cuda_bf16.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/ops.h"

namespace meshscope::kernels::cuda {
namespace {

using detail::grid_for;
using detail::kBlock;

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCoeff = 0.044715f;

__device__ float activate(Activation act, float x) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.f ? x : 0.f;
    case Activation::kGelu:
      return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * (x + kGeluCoeff * x * x * x)));
    default:
      return x;
  }
}

__device__ float activation_derivative(Activation act, float x) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.f ? 1.f : 0.f;
    case Activation::kGelu: {
      const float t = tanhf(kSqrt2OverPi * (x + kGeluCoeff * x * x * x));
      const float du = kSqrt2OverPi * (1.f + 3.f * kGeluCoeff * x * x);
      return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * du;
    }
    default:
      return 1.f;
  }
}

__global__ void bias_activation_kernel(Activation act, size_t n, int cols, const float* bias,
                                       float* pre, float* out) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const float v = pre[i] + (bias ? bias[i % cols] : 0.f);
    pre[i] = v;
    out[i] = activate(act, v);
  }
}

__global__ void activation_backward_kernel(Activation act, size_t n, const float* pre,
                                           const float* grad_out, float* grad_pre) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    grad_pre[i] = grad_out[i] * activation_derivative(act, pre[i]);
  }
}

__global__ void axpy_kernel(size_t n, float alpha, const float* x, float* y) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    y[i] += alpha * x[i];
  }
}

__global__ void fill_kernel(size_t n, float value, float* x) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = value;
  }
}

constexpr int kMaxSumInputs = 8;
struct SumInputs {
  const float* ptr[kMaxSumInputs];
  int count;
};

// out = (accumulate ? out : 0) + sum of the inputs; each element is read before it is written,
// so out may alias an input.
__global__ void sum_kernel(size_t n, SumInputs in, bool accumulate, float* out) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    float acc = accumulate ? out[i] : 0.f;
    for (int j = 0; j < in.count; ++j) acc += in.ptr[j][i];
    out[i] = acc;
  }
}

__global__ void to_bf16_kernel(size_t n, const float* in, __nv_bfloat16* out) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = __float2bfloat16_rn(in[i]);
  }
}

void check_launch() { MESHSCOPE_CUDA_CHECK(cudaGetLastError()); }

}  // namespace

void bias_activation_forward(Context& ctx, Activation act, int rows, int cols, const float* bias,
                             float* pre, float* out) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0) return;
  bias_activation_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(act, n, cols, bias, pre, out);
  check_launch();
}

void activation_backward(Context& ctx, Activation act, int rows, int cols, const float* pre,
                         const float* grad_out, float* grad_pre) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0) return;
  activation_backward_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(act, n, pre, grad_out,
                                                                       grad_pre);
  check_launch();
}

void sgd(Context& ctx, size_t n, float lr, float* param, const float* grad) {
  axpy(ctx, n, -lr, grad, param);
}

void axpy(Context& ctx, size_t n, float alpha, const float* x, float* y) {
  if (n == 0) return;
  axpy_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(n, alpha, x, y);
  check_launch();
}

void fill(Context& ctx, size_t n, float value, float* x) {
  if (n == 0) return;
  fill_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(n, value, x);
  check_launch();
}

void sum(cudaStream_t stream, size_t n, const float* const* inputs, int num_inputs, float* out) {
  if (n == 0) return;
  if (num_inputs <= 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(out, 0, n * sizeof(float), stream));  // +0.0f: all bits 0
    return;
  }
  // Eight peers per launch; the rest accumulate into out in further launches.
  for (int first = 0; first < num_inputs; first += kMaxSumInputs) {
    SumInputs batch{};
    batch.count = std::min(kMaxSumInputs, num_inputs - first);
    for (int j = 0; j < batch.count; ++j) batch.ptr[j] = inputs[first + j];
    sum_kernel<<<grid_for(n), kBlock, 0, stream>>>(n, batch, first > 0, out);
    check_launch();
  }
}

void float_to_bf16(cudaStream_t stream, size_t n, const float* in, void* out_bf16) {
  if (n == 0) return;
  to_bf16_kernel<<<grid_for(n), kBlock, 0, stream>>>(n, in, static_cast<__nv_bfloat16*>(out_bf16));
  check_launch();
}

}  // namespace meshscope::kernels::cuda
