// Block-wide sum and max reductions through warp shuffles (included by .cu files only).
#pragma once

namespace meshscope::kernels::cuda::detail {

template <typename T, typename Op>
__device__ T warp_reduce(T v, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of the block gets the result. blockDim.x must be a multiple of 32, at most 1024.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T partial[32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  v = warp_reduce(v, op);
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  v = threadIdx.x < warps ? partial[threadIdx.x] : identity;
  if (warp == 0) v = warp_reduce(v, op);
  if (threadIdx.x == 0) partial[0] = v;
  __syncthreads();
  return partial[0];
}

struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

}  // namespace meshscope::kernels::cuda::detail
