// GEMM rates as meshscope measures them (gemm_rates.h).
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "kernels/cuda/gemm_rates.h"
#include "kernels/cuda/gemm_timing.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/random_fill.h"

namespace meshscope::kernels::cuda {
namespace {

__device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Element i: a standard normal by Box-Muller on two uniforms hashed from (seed, i).
__global__ void fill_normal_bf16_kernel(__nv_bfloat16* out, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint64_t h = splitmix64(seed ^ splitmix64(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) / 16777217.0f;  // (0, 1]
    const float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) / 16777216.0f;
    out[i] = __float2bfloat16(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

}  // namespace

void fill_normal_bf16(cudaStream_t stream, __nv_bfloat16* out, size_t n, uint64_t seed) {
  fill_normal_bf16_kernel<<<1024, 256, 0, stream>>>(out, n, seed);
  MESHSCOPE_CUDA_CHECK(cudaGetLastError());
}

namespace {

// Operands for shapes up to the largest of each matrix, filled once; C in bf16, or in fp32 (zeroed)
// for GEMMs that accumulate into it.
struct Operands {
  DeviceBuffer<__nv_bfloat16> a, b, c;
  DeviceBuffer<float> c32;
  Operands(cudaStream_t stream, size_t a_elems, size_t b_elems, size_t c_elems, GemmOutput output,
           uint64_t seed)
      : a(a_elems),
        b(b_elems),
        c(output == GemmOutput::kBf16 ? c_elems : 0),
        c32(output == GemmOutput::kFp32Accumulate ? c_elems : 0) {
    fill_normal_bf16(stream, a.data(), a_elems, seed);
    fill_normal_bf16(stream, b.data(), b_elems, seed + 1);
    if (c32.size() > 0)
      MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(c32.data(), 0, c32.size() * sizeof(float), stream));
    MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

// C[b, m, n] = A[b, m, k] B[b, k, n], row-major: column-major cuBLAS computes C^T = B^T A^T. Into
// fp32 C with beta 1, it is the weight-gradient GEMM of Megatron's gradient_accumulation_fusion
// (fused_weight_gradient_dense: cublasGemmEx, bf16 operands, the fp32 main gradient as C and D).
void gemm(cublasHandle_t h, const GemmShape& s, const Operands& o) {
  const float alpha = 1;
  const bool accumulate = o.c32.size() > 0;
  const float beta = accumulate ? 1.0f : 0.0f;
  void* c = accumulate ? static_cast<void*>(o.c32.data()) : static_cast<void*>(o.c.data());
  MESHSCOPE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m),
      static_cast<int>(s.k), &alpha, o.b.data(), CUDA_R_16BF, static_cast<int>(s.n), s.k * s.n,
      o.a.data(), CUDA_R_16BF, static_cast<int>(s.k), s.m * s.k, &beta, c,
      accumulate ? CUDA_R_32F : CUDA_R_16BF, static_cast<int>(s.n), s.m * s.n,
      static_cast<int>(s.b), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void check_gemm_shape(const GemmShape& s) {
  constexpr int64_t kMaxDim = 1 << 30;
  if (s.b < 1 || s.m < 1 || s.n < 1 || s.k < 1 || s.b > kMaxDim || s.m > kMaxDim || s.n > kMaxDim ||
      s.k > kMaxDim)
    throw std::runtime_error("gemm shape b " + std::to_string(s.b) + " m " + std::to_string(s.m) +
                             " n " + std::to_string(s.n) + " k " + std::to_string(s.k) +
                             ": each size must be 1 to 2^30");
  // Elements of the largest operand, in double so that no product overflows: past 2^40 (2 TB of
  // bf16) no GPU holds it.
  const double b = static_cast<double>(s.b);
  const double largest = b * std::max({static_cast<double>(s.m) * static_cast<double>(s.k),
                                       static_cast<double>(s.k) * static_cast<double>(s.n),
                                       static_cast<double>(s.m) * static_cast<double>(s.n)});
  if (largest > std::ldexp(1.0, 40))
    throw std::runtime_error("gemm shape b " + std::to_string(s.b) + " m " + std::to_string(s.m) +
                             " n " + std::to_string(s.n) + " k " + std::to_string(s.k) +
                             ": an operand larger than any GPU's memory");
}

namespace {

// A stream, its cuBLAS handle, operands for shapes up to the given sizes, and two timing events.
class Bench {
 public:
  Bench(size_t a_elems, size_t b_elems, size_t c_elems, uint64_t seed,
        GemmOutput output = GemmOutput::kBf16)
      : stream_(make_stream()),
        cublas_(make_cublas(stream_.get())),
        operands_(stream_.get(), a_elems, b_elems, c_elems, output, seed),
        start_(make_event(true)),
        stop_(make_event(true)) {}

  void run(const GemmShape& s, int calls) {
    for (int i = 0; i < calls; ++i) gemm(cublas_.get(), s, operands_);
  }

  double seconds(const GemmShape& s, int calls) {
    return event_seconds(stream_.get(), start_.get(), stop_.get(), [&] { run(s, calls); });
  }

 private:
  Stream stream_;
  CublasHandle cublas_;
  Operands operands_;
  Event start_, stop_;
};

}  // namespace

std::vector<GemmRate> measure_gemm_rates(const std::vector<GemmShape>& shapes, int warmup,
                                         int iters, uint64_t seed, GemmOutput output) {
  if (shapes.empty() || iters < 1) return {};
  size_t a_max = 0, b_max = 0, c_max = 0;
  for (const GemmShape& s : shapes) {
    check_gemm_shape(s);
    a_max = std::max<size_t>(a_max, s.b * s.m * s.k);
    b_max = std::max<size_t>(b_max, s.b * s.k * s.n);
    c_max = std::max<size_t>(c_max, s.b * s.m * s.n);
  }
  Bench bench(a_max, b_max, c_max, seed, output);
  return rates_in_rounds(bench, shapes, warmup, iters);
}

HeldGemm hold_gemm(const GemmShape& shape, double seconds, double window_s, int bursts,
                   double idle_s, uint64_t seed) {
  check_gemm_shape(shape);
  HeldGemm held;
  if (!(seconds > 0) || !(window_s > 0) || bursts < 1 || !(idle_s >= 0)) return held;
  Bench bench(shape.b * shape.m * shape.k, shape.b * shape.k * shape.n, shape.b * shape.m * shape.n,
              seed);
  bench.run(shape, 3);  // cuBLAS's first-call setup
  std::vector<double> burst;
  for (int i = 0; i < bursts; ++i) {
    MESHSCOPE_CUDA_CHECK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    // One untimed call first: it takes the clock up from idle, and the timed call is queued while
    // it runs, so that neither the ramp nor the host's launch falls in the timed one.
    bench.run(shape, 1);
    const double t = bench.seconds(shape, 1);
    if (t > 0) burst.push_back(gemm_flops(shape) / t);
  }
  if (!burst.empty()) {
    std::sort(burst.begin(), burst.end());
    held.burst_flops_per_s = burst[burst.size() / 2];
  }
  // Calls per window from one timed call, so each window is a batch queued back to back.
  const int calls =
      std::max(1, static_cast<int>(window_s / std::max(1e-6, bench.seconds(shape, 1))));
  const auto unix_now = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  held.hold_begin_unix_s = unix_now();
  const auto begin = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() <
         seconds) {
    const double t = bench.seconds(shape, calls);
    held.window_flops_per_s.push_back(t > 0 ? gemm_flops(shape) * calls / t : 0);
  }
  held.hold_end_unix_s = unix_now();
  return held;
}

}  // namespace meshscope::kernels::cuda
