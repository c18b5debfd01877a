// FP8 GEMM rates as meshscope measures them (gemm_rates.h, measure_fp8_gemm_rates): e4m3 x e4m3 ->
// bf16 through cuBLASLt, the call Transformer Engine's FP8 linears make.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cuda/gemm_rates.h"
#include "kernels/cuda/gemm_timing.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/random_fill.h"

namespace meshscope::kernels::cuda {
namespace {

__global__ void bf16_to_e4m3_kernel(const __nv_bfloat16* in, __nv_fp8_e4m3* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = __nv_fp8_e4m3(__bfloat162float(in[i]));
}

// n normally distributed values in e4m3 (drawn in bf16, then cast: unit scale, as a tensor whose
// amax is a few units is scaled by Transformer Engine's delayed scaling).
void fill_normal_e4m3(cudaStream_t stream, __nv_fp8_e4m3* out, size_t n, uint64_t seed) {
  DeviceBuffer<__nv_bfloat16> staging(n);
  fill_normal_bf16(stream, staging.data(), n, seed);
  bf16_to_e4m3_kernel<<<1024, 256, 0, stream>>>(staging.data(), out, n);
  MESHSCOPE_CUDA_CHECK(cudaGetLastError());
  MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

struct LtRelease {
  void operator()(cublasLtHandle_t h) const noexcept { cublasLtDestroy(h); }
};
struct DescRelease {
  void operator()(cublasLtMatmulDesc_t d) const noexcept { cublasLtMatmulDescDestroy(d); }
};
struct LayoutRelease {
  void operator()(cublasLtMatrixLayout_t l) const noexcept { cublasLtMatrixLayoutDestroy(l); }
};
struct PrefRelease {
  void operator()(cublasLtMatmulPreference_t p) const noexcept {
    cublasLtMatmulPreferenceDestroy(p);
  }
};
using LtHandle = UniqueHandle<cublasLtHandle_t, LtRelease>;
using Desc = UniqueHandle<cublasLtMatmulDesc_t, DescRelease>;
using Layout = UniqueHandle<cublasLtMatrixLayout_t, LayoutRelease>;
using Pref = UniqueHandle<cublasLtMatmulPreference_t, PrefRelease>;

Layout layout(cudaDataType_t type, int64_t rows, int64_t cols) {
  cublasLtMatrixLayout_t l = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows),
                                                    static_cast<uint64_t>(cols), rows));
  return Layout(l);
}

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // Transformer Engine's cuBLASLt workspace

// One shape's FP8 GEMM as Transformer Engine calls it (TN, the only layout cuBLASLt's FP8 kernels
// take on Hopper): the weight [n, k] row-major transposed, times the input [m, k] row-major, into
// [m, n] row-major bf16; fp32 accumulation, fp32 scale type, the algorithm cuBLASLt's heuristic
// ranks first for the workspace.
class Fp8Gemm {
 public:
  Fp8Gemm(cublasLtHandle_t lt, const GemmShape& s)
      : lt_(lt),
        a_(layout(CUDA_R_8F_E4M3, s.k, s.n)),
        b_(layout(CUDA_R_8F_E4M3, s.k, s.m)),
        d_(layout(CUDA_R_16BF, s.n, s.m)) {
    cublasLtMatmulDesc_t desc = nullptr;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    desc_ = Desc(desc);
    const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    MESHSCOPE_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    MESHSCOPE_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
    cublasLtMatmulPreference_t pref = nullptr;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    Pref owner(pref);
    const uint64_t bytes = kWorkspaceBytes;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a_.get(), b_.get(), d_.get(),
                                                          d_.get(), pref, 1, &result, &found));
    if (found < 1)
      throw std::runtime_error("cuBLASLt has no FP8 algorithm for a " + std::to_string(s.m) +
                               " x " + std::to_string(s.n) + " x " + std::to_string(s.k) +
                               " GEMM on this GPU (FP8 needs sm_89 or later)");
    algo_ = result.algo;
  }

  void run(cudaStream_t stream, const __nv_fp8_e4m3* weight, const __nv_fp8_e4m3* input,
           __nv_bfloat16* out, void* workspace) const {
    const float alpha = 1, beta = 0;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmul(lt_, desc_.get(), &alpha, weight, a_.get(), input,
                                          b_.get(), &beta, out, d_.get(), out, d_.get(), &algo_,
                                          workspace, kWorkspaceBytes, stream));
  }

 private:
  cublasLtHandle_t lt_;
  Desc desc_;
  Layout a_, b_, d_;
  cublasLtMatmulAlgo_t algo_{};
};

LtHandle make_lt() {
  cublasLtHandle_t h = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtCreate(&h));
  return LtHandle(h);
}

// The shapes' GEMMs, operands for the largest of each, a workspace and two timing events.
class Fp8Bench {
 public:
  Fp8Bench(const std::vector<GemmShape>& shapes, size_t a_elems, size_t b_elems, size_t c_elems,
           uint64_t seed)
      : stream_(make_stream()),
        lt_(make_lt()),
        weight_(b_elems),
        input_(a_elems),
        out_(c_elems),
        workspace_(kWorkspaceBytes),
        start_(make_event(true)),
        stop_(make_event(true)) {
    fill_normal_e4m3(stream_.get(), weight_.data(), b_elems, seed);
    fill_normal_e4m3(stream_.get(), input_.data(), a_elems, seed + 1);
    for (const GemmShape& s : shapes) gemms_.emplace_back(lt_.get(), s);
    shapes_ = shapes;
  }

  void run(const GemmShape& s, int calls) {
    const Fp8Gemm& g = gemm_of(s);
    for (int i = 0; i < calls; ++i)
      g.run(stream_.get(), weight_.data(), input_.data(), out_.data(), workspace_.data());
  }

  double seconds(const GemmShape& s, int calls) {
    MESHSCOPE_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
    run(s, calls);
    MESHSCOPE_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
    MESHSCOPE_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    MESHSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms * 1e-3;
  }

 private:
  const Fp8Gemm& gemm_of(const GemmShape& s) const {
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
  std::vector<Fp8Gemm> gemms_;
};

}  // namespace

std::vector<GemmRate> measure_fp8_gemm_rates(const std::vector<GemmShape>& shapes, int warmup,
                                             int iters, uint64_t seed) {
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
  Fp8Bench bench(shapes, a_max, b_max, c_max, seed);
  return rates_in_rounds(bench, shapes, warmup, iters);
}

}  // namespace meshscope::kernels::cuda
