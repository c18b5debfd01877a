// Reductions: bias gradient (column sums) and the two losses with their gradients.
#include <cfloat>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/ops.h"

namespace meshscope::kernels::cuda {
namespace {

using detail::block_reduce;
using detail::grid_for;
using detail::kBlock;

constexpr int kTileCols = 32;
constexpr int kTileRows = 8;

// One block per 32 columns; its 8 thread rows stride over the rows, then fold in shared memory.
__global__ void bias_grad_kernel(int rows, int cols, const float* grad, float beta, float* db) {
  __shared__ float partial[kTileRows][kTileCols + 1];
  const int c = blockIdx.x * kTileCols + threadIdx.x;
  float acc = 0.f;
  if (c < cols) {
    for (int r = threadIdx.y; r < rows; r += kTileRows)
      acc += grad[static_cast<size_t>(r) * cols + c];
  }
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.f;
    for (int i = 0; i < kTileRows; ++i) total += partial[i][threadIdx.x];
    db[c] = beta == 0.f ? total : beta * db[c] + total;  // beta 0 overwrites, as BLAS does
  }
}

// One block per row: max, sum of exponentials, then gradient and the row's loss.
__global__ void softmax_xent_kernel(int classes, const float* logits, const int32_t* labels,
                                    float scale, float* grad, double* loss, LabelCheck* check) {
  const int r = blockIdx.x;
  const float* x = logits + static_cast<size_t>(r) * classes;
  float* g = grad + static_cast<size_t>(r) * classes;
  const int label = labels[r];
  if (label < 0 || label >= classes) {
    if (threadIdx.x == 0 && atomicCAS(&check->has_bad_label, 0, 1) == 0) check->bad_label = label;
    return;
  }
  float m = -FLT_MAX;
  for (int j = threadIdx.x; j < classes; j += blockDim.x) m = fmaxf(m, x[j]);
  m = block_reduce(m, detail::Max{}, -FLT_MAX);
  float s = 0.f;
  for (int j = threadIdx.x; j < classes; j += blockDim.x) s += expf(x[j] - m);
  s = block_reduce(s, detail::Sum{}, 0.f);
  const float inv = 1.f / s;
  for (int j = threadIdx.x; j < classes; j += blockDim.x) {
    g[j] = scale * (expf(x[j] - m) * inv - (j == label ? 1.f : 0.f));
  }
  if (threadIdx.x == 0) {
    const double row_loss = log(static_cast<double>(s)) + m - x[label];
    atomicAdd(loss, static_cast<double>(scale) * row_loss);
  }
}

__global__ void mse_kernel(size_t n, const float* pred, const float* target, float scale,
                           float* grad, double* loss) {
  double acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const float d = pred[i] - target[i];
    grad[i] = scale * 2.f * d;
    acc += static_cast<double>(d) * d;
  }
  acc = block_reduce(acc, detail::Sum{}, 0.0);
  if (threadIdx.x == 0) atomicAdd(loss, static_cast<double>(scale) * acc);
}

void check_launch() { MESHSCOPE_CUDA_CHECK(cudaGetLastError()); }

}  // namespace

void bias_grad(Context& ctx, int rows, int cols, const float* grad, float beta, float* db) {
  if (cols == 0) return;
  const dim3 block(kTileCols, kTileRows);
  const dim3 blocks((cols + kTileCols - 1) / kTileCols);
  bias_grad_kernel<<<blocks, block, 0, ctx.stream()>>>(rows, cols, grad, beta, db);
  check_launch();
}

void softmax_cross_entropy_accumulate(Context& ctx, int rows, int classes, const float* logits,
                                      const int32_t* labels, float scale, float* grad_logits,
                                      double* loss_accum) {
  if (rows == 0) return;
  softmax_xent_kernel<<<rows, kBlock, 0, ctx.stream()>>>(
      classes, logits, labels, scale, grad_logits, loss_accum, ctx.label_check());
  check_launch();
}

void mse_accumulate(Context& ctx, size_t n, const float* pred, const float* target, float scale,
                    float* grad, double* loss_accum) {
  if (n == 0) return;
  mse_kernel<<<grid_for(n), kBlock, 0, ctx.stream()>>>(n, pred, target, scale, grad, loss_accum);
  check_launch();
}

double softmax_cross_entropy(Context& ctx, int rows, int classes, const float* logits,
                             const int32_t* labels, float scale, float* grad_logits) {
  MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(ctx.loss_slot(), 0, sizeof(double), ctx.stream()));
  softmax_cross_entropy_accumulate(ctx, rows, classes, logits, labels, scale, grad_logits,
                                   ctx.loss_slot());
  return ctx.read_loss();
}

double mse(Context& ctx, size_t n, const float* pred, const float* target, float scale,
           float* grad) {
  MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(ctx.loss_slot(), 0, sizeof(double), ctx.stream()));
  mse_accumulate(ctx, n, pred, target, scale, grad, ctx.loss_slot());
  return ctx.read_loss();
}

}  // namespace meshscope::kernels::cuda
