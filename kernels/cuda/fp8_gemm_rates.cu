// FP8 GEMM rates as meshscope measures them (gemm_rates.h, measure_fp8_gemm_rates): e4m3 x e4m3 ->
// bf16 through cuBLASLt (lt_gemm.h), the call Transformer Engine's FP8 linears make.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cuda/gemm_rates.h"
#include "kernels/cuda/gemm_timing.h"
#include "kernels/cuda/lt_gemm.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/random_fill.h"

namespace meshscope::kernels::cuda {
namespace {

__global__ void bf16_to_e4m3_kernel(const __nv_bfloat16* in, __nv_fp8_e4m3* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = __nv_fp8_e4m3(__bfloat162float(in[i]));
}

// n normally distributed values in e4m3 (drawn in bf16, then cast at unit scale, as a tensor whose
// amax is a few units is scaled by Transformer Engine's delayed scaling).
void fill_normal_e4m3(cudaStream_t stream, __nv_fp8_e4m3* out, size_t n, uint64_t seed) {
  DeviceBuffer<__nv_bfloat16> staging(n);
  fill_normal_bf16(stream, staging.data(), n, seed);
  bf16_to_e4m3_kernel<<<1024, 256, 0, stream>>>(staging.data(), out, n);
  MESHSCOPE_CUDA_CHECK(cudaGetLastError());
  MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // Transformer Engine's on Hopper

// Each shape's GEMM, operands for the largest of each, a workspace and two timing events.
class Fp8Bench {
 public:
  Fp8Bench(const std::vector<GemmShape>& shapes, size_t a_elems, size_t b_elems, size_t c_elems,
           bool fast_accumulation, uint64_t seed)
      : stream_(make_stream()),
        lt_(make_lt()),
        weight_(b_elems),
        input_(a_elems),
        out_(c_elems),
        workspace_(kWorkspaceBytes),
        start_(make_event(true)),
        stop_(make_event(true)),
        shapes_(shapes) {
    fill_normal_e4m3(stream_.get(), weight_.data(), b_elems, seed);
    fill_normal_e4m3(stream_.get(), input_.data(), a_elems, seed + 1);
    for (const GemmShape& s : shapes)
      gemms_.emplace_back(lt_.get(), CUDA_R_8F_E4M3, s.m, s.n, s.k, 0, kWorkspaceBytes,
                          fast_accumulation);
  }

  void run(const GemmShape& s, int calls) {
    const LtGemm& g = gemm_of(s);
    for (int i = 0; i < calls; ++i)
      g.run(stream_.get(), weight_.data(), input_.data(), out_.data(), workspace_.data());
  }

  double seconds(const GemmShape& s, int calls) {
    return event_seconds(stream_.get(), start_.get(), stop_.get(), [&] { run(s, calls); });
  }

 private:
  const LtGemm& gemm_of(const GemmShape& s) const {
    for (size_t i = 0; i < shapes_.size(); ++i)
      if (shapes_[i].m == s.m && shapes_[i].n == s.n && shapes_[i].k == s.k) return gemms_[i];
    throw std::logic_error("fp8 gemm: a shape not prepared");
  }

  Stream stream_;
  LtHandle lt_;
  DeviceBuffer<__nv_fp8_e4m3> weight_, input_;
  DeviceBuffer<__nv_bfloat16> out_;
  DeviceBuffer<char> workspace_;
  Event start_, stop_;
  std::vector<GemmShape> shapes_;
  std::vector<LtGemm> gemms_;
};

}  // namespace

std::vector<GemmRate> measure_fp8_gemm_rates(const std::vector<GemmShape>& shapes,
                                             Fp8Accumulation accumulation, int warmup, int iters,
                                             uint64_t seed) {
  if (shapes.empty() || iters < 1) return {};
  size_t a_max = 0, b_max = 0, c_max = 0;
  for (const GemmShape& s : shapes) {
    check_gemm_shape(s);
    if (s.b != 1)
      throw std::runtime_error("fp8 gemm shape b " + std::to_string(s.b) + " m " +
                               std::to_string(s.m) + " n " + std::to_string(s.n) + " k " +
                               std::to_string(s.k) + ": FP8 rates are measured for b 1 only");
    a_max = std::max<size_t>(a_max, s.m * s.k);
    b_max = std::max<size_t>(b_max, s.k * s.n);
    c_max = std::max<size_t>(c_max, s.m * s.n);
  }
  Fp8Bench bench(shapes, a_max, b_max, c_max, accumulation == Fp8Accumulation::kFast, seed);
  return rates_in_rounds(bench, shapes, warmup, iters);
}

}  // namespace meshscope::kernels::cuda
