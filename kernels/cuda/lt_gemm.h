// One GEMM through cuBLASLt as Transformer Engine calls it for a linear's forward
// (nvte_cublas_gemm, TN: the only layout cuBLASLt's FP8 kernels take on Hopper): the weight [n, k]
// row-major transposed, times the input [m, k] row-major, into [m, n] row-major bf16; fp32
// accumulation and scale type, FP8 products accumulated fast as TE's forward does or split as its
// backward GEMMs do (gemm_rates.h, Fp8Accumulation); the algorithm cuBLASLt's heuristic ranks first
// for the workspace, optionally with an SM count target (TE's _math_sms). Used by the SM margin
// (sm_margin.h) and FP8 rate (gemm_rates.h) measurements.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/raii.h"

namespace meshscope::kernels::cuda {

struct LtRelease {
  void operator()(cublasLtHandle_t h) const noexcept { cublasLtDestroy(h); }
};
struct LtDescRelease {
  void operator()(cublasLtMatmulDesc_t d) const noexcept { cublasLtMatmulDescDestroy(d); }
};
struct LtLayoutRelease {
  void operator()(cublasLtMatrixLayout_t l) const noexcept { cublasLtMatrixLayoutDestroy(l); }
};
using LtHandle = UniqueHandle<cublasLtHandle_t, LtRelease>;
using LtDesc = UniqueHandle<cublasLtMatmulDesc_t, LtDescRelease>;
using LtLayout = UniqueHandle<cublasLtMatrixLayout_t, LtLayoutRelease>;

LtHandle make_lt();

class LtGemm {
 public:
  // `operands`: CUDA_R_16BF or CUDA_R_8F_E4M3 (both operands); the output is bf16. Throws
  // std::runtime_error when cuBLASLt has no algorithm for the shape and type on this GPU.
  // `fast_accumulation`: CUBLASLT_MATMUL_DESC_FAST_ACCUM, for FP8 operands only (TE sets it for
  // FP8 GEMMs that do not ask for split accumulation, and never for bf16).
  LtGemm(cublasLtHandle_t lt, cudaDataType_t operands, int64_t m, int64_t n, int64_t k,
         int sm_target, size_t workspace, bool fast_accumulation = true);

  void run(cudaStream_t stream, const void* weight, const void* input, void* out,
           void* workspace) const;

 private:
  cublasLtHandle_t lt_;
  LtDesc desc_;
  LtLayout a_, b_, d_;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_;
};

}  // namespace meshscope::kernels::cuda
