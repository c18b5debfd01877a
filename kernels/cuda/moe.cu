// Mixture-of-experts routing on the GPU, with kernels/cpu/ops.h's contracts: softmax over the
// experts, top-k with capacity, dispatch, weighted combine and their backwards. Sized for the
// executor's routing groups (thousands of tokens, tens of experts): simple loops per token or per
// expert, the sequential capacity rule one thread per expert, as kernels/cpu orders it.
#include <stdexcept>
#include <string>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/ops.h"

namespace meshscope::kernels::cuda {
namespace {

using detail::grid_for;
using detail::kBlock;

void check_launch() { MESHSCOPE_CUDA_CHECK(cudaGetLastError()); }

__global__ void softmax_rows_kernel(int rows, int cols, const float* logits, float* probs) {
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
    const float* z = logits + static_cast<size_t>(r) * cols;
    float* p = probs + static_cast<size_t>(r) * cols;
    float m = z[0];
    for (int c = 1; c < cols; ++c) m = fmaxf(m, z[c]);
    double denom = 0;
    for (int c = 0; c < cols; ++c) denom += exp(static_cast<double>(z[c] - m));
    for (int c = 0; c < cols; ++c)
      p[c] = static_cast<float>(exp(static_cast<double>(z[c] - m)) / denom);
  }
}

// Per token: its k experts by descending probability, the lower index first among equals.
__global__ void top_k_choose_kernel(int tokens, int experts, int k, const float* probs,
                                    int32_t* choice, float* gate) {
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < tokens; t += gridDim.x * blockDim.x) {
    const float* p = probs + static_cast<size_t>(t) * experts;
    int32_t* mine = choice + static_cast<size_t>(t) * k;
    for (int j = 0; j < k; ++j) {
      int best = -1;
      for (int e = 0; e < experts; ++e) {
        bool taken = false;
        for (int i = 0; i < j; ++i) taken = taken || mine[i] == e;
        if (!taken && (best < 0 || p[e] > p[best])) best = e;
      }
      mine[j] = best;
      gate[static_cast<size_t>(t) * k + j] = p[best];
    }
  }
}

// Per expert: positions choice by choice, tokens in order; beyond capacity, dropped.
__global__ void top_k_place_kernel(int tokens, int experts, int k, int capacity,
                                   const int32_t* choice, int32_t* dest) {
  for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < experts; e += gridDim.x * blockDim.x) {
    int used = 0;
    for (int j = 0; j < k; ++j) {
      for (int t = 0; t < tokens; ++t) {
        const size_t i = static_cast<size_t>(t) * k + j;
        if (choice[i] != e) continue;
        dest[i] = used < capacity ? e * capacity + used : -1;
        ++used;
      }
    }
  }
}

__global__ void dispatch_kernel(size_t n, int k, int cols, const float* x, const int32_t* dest,
                                float* buffer) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t choice = i / cols;  // t * k + j
    const int c = static_cast<int>(i % cols);
    const int32_t d = dest[choice];
    if (d >= 0) buffer[static_cast<size_t>(d) * cols + c] = x[(choice / k) * cols + c];
  }
}

__global__ void combine_kernel(size_t n, int k, int cols, const float* buffer, const int32_t* dest,
                               const float* gate, float* y) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t t = i / cols;
    const int c = static_cast<int>(i % cols);
    float acc = y[i];
    for (int j = 0; j < k; ++j) {
      const int32_t d = dest[t * k + j];
      if (d < 0) continue;
      const float w = gate != nullptr ? gate[t * k + j] : 1.f;
      acc += w * buffer[static_cast<size_t>(d) * cols + c];
    }
    y[i] = acc;
  }
}

__global__ void combine_grad_buffer_kernel(size_t n, int k, int cols, const float* dy,
                                           const int32_t* dest, const float* gate,
                                           float* d_buffer) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t choice = i / cols;
    const int c = static_cast<int>(i % cols);
    const int32_t d = dest[choice];
    if (d >= 0)
      d_buffer[static_cast<size_t>(d) * cols + c] = gate[choice] * dy[(choice / k) * cols + c];
  }
}

__global__ void combine_grad_gate_kernel(size_t choices, int k, int cols, const float* dy,
                                         const float* buffer, const int32_t* dest, float* d_gate) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < choices;
       i += size_t{gridDim.x} * blockDim.x) {
    const int32_t d = dest[i];
    double dot = 0;
    if (d >= 0) {
      const float* g = dy + (i / k) * cols;
      const float* out = buffer + static_cast<size_t>(d) * cols;
      for (int c = 0; c < cols; ++c) dot += static_cast<double>(g[c]) * out[c];
    }
    d_gate[i] = static_cast<float>(dot);
  }
}

__global__ void router_backward_kernel(int tokens, int experts, int k, int capacity,
                                       const float* probs, const int32_t* dest, const float* d_gate,
                                       float* d_logits) {
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < tokens; t += gridDim.x * blockDim.x) {
    const float* p = probs + static_cast<size_t>(t) * experts;
    float* dz = d_logits + static_cast<size_t>(t) * experts;
    for (int e = 0; e < experts; ++e) dz[e] = 0.f;
    double inner = 0;
    for (int j = 0; j < k; ++j) {
      const int32_t d = dest[static_cast<size_t>(t) * k + j];
      if (d < 0) continue;
      const int e = d / capacity;
      dz[e] = d_gate[static_cast<size_t>(t) * k + j];
      inner += static_cast<double>(p[e]) * dz[e];
    }
    for (int e = 0; e < experts; ++e)
      dz[e] = static_cast<float>(p[e] * (static_cast<double>(dz[e]) - inner));
  }
}

}  // namespace

void softmax_rows(Context& ctx, int rows, int cols, const float* logits, float* probs) {
  if (rows <= 0 || cols <= 0) return;
  softmax_rows_kernel<<<grid_for(rows), kBlock, 0, ctx.stream()>>>(rows, cols, logits, probs);
  check_launch();
}

void top_k_route(Context& ctx, int tokens, int experts, int k, int capacity, const float* probs,
                 int32_t* dest, float* gate) {
  if (k < 1 || k > experts || capacity < 1) {
    throw std::invalid_argument(
        "top_k_route: needs 1 <= k <= experts and capacity >= 1, got k=" + std::to_string(k) +
        " experts=" + std::to_string(experts) + " capacity=" + std::to_string(capacity));
  }
  if (tokens <= 0) return;
  auto* choice = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * size_t(tokens) * k));
  top_k_choose_kernel<<<grid_for(tokens), kBlock, 0, ctx.stream()>>>(tokens, experts, k, probs,
                                                                     choice, gate);
  check_launch();
  top_k_place_kernel<<<grid_for(experts), kBlock, 0, ctx.stream()>>>(tokens, experts, k, capacity,
                                                                     choice, dest);
  check_launch();
}

void moe_dispatch(Context& ctx, int tokens, int k, int cols, int buffer_rows, const float* x,
                  const int32_t* dest, float* buffer) {
  const size_t bytes = sizeof(float) * size_t(buffer_rows) * cols;
  if (bytes > 0) MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(buffer, 0, bytes, ctx.stream()));
  const size_t n = size_t(tokens) * k * cols;
  if (n == 0) return;
  dispatch_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(n, k, cols, x, dest, buffer);
  check_launch();
}

void moe_combine(Context& ctx, int tokens, int k, int cols, const float* buffer,
                 const int32_t* dest, const float* gate, float* y) {
  const size_t n = size_t(tokens) * cols;
  if (n == 0) return;
  combine_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(n, k, cols, buffer, dest, gate, y);
  check_launch();
}

void moe_combine_backward(Context& ctx, int tokens, int k, int cols, int buffer_rows,
                          const float* dy, const float* buffer, const int32_t* dest,
                          const float* gate, float* d_buffer, float* d_gate) {
  const size_t bytes = sizeof(float) * size_t(buffer_rows) * cols;
  if (bytes > 0) MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(d_buffer, 0, bytes, ctx.stream()));
  const size_t choices = size_t(tokens) * k, n = choices * cols;
  if (n == 0) return;
  combine_grad_buffer_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(n, k, cols, dy, dest, gate,
                                                                       d_buffer);
  check_launch();
  combine_grad_gate_kernel<<<grid_for(choices), kBlock, 0, ctx.stream()>>>(choices, k, cols, dy,
                                                                           buffer, dest, d_gate);
  check_launch();
}

void router_backward(Context& ctx, int tokens, int experts, int k, int capacity, const float* probs,
                     const int32_t* dest, const float* d_gate, float* d_logits) {
  if (tokens <= 0 || experts <= 0) return;
  router_backward_kernel<<<grid_for(tokens), kBlock, 0, ctx.stream()>>>(
      tokens, experts, k, capacity, probs, dest, d_gate, d_logits);
  check_launch();
}

}  // namespace meshscope::kernels::cuda
