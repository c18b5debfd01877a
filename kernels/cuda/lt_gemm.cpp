// One GEMM through cuBLASLt as Transformer Engine calls it (lt_gemm.h).
#include "kernels/cuda/lt_gemm.h"

#include <stdexcept>
#include <string>

#include "kernels/cuda/check.h"

namespace meshscope::kernels::cuda {
namespace {

struct PrefRelease {
  void operator()(cublasLtMatmulPreference_t p) const noexcept {
    cublasLtMatmulPreferenceDestroy(p);
  }
};
using Pref = UniqueHandle<cublasLtMatmulPreference_t, PrefRelease>;

LtLayout layout(cudaDataType_t type, int64_t rows, int64_t cols) {
  cublasLtMatrixLayout_t l = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<uint64_t>(rows),
                                                    static_cast<uint64_t>(cols), rows));
  return LtLayout(l);
}

}  // namespace

LtHandle make_lt() {
  cublasLtHandle_t h = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtCreate(&h));
  return LtHandle(h);
}

LtGemm::LtGemm(cublasLtHandle_t lt, cudaDataType_t operands, int64_t m, int64_t n, int64_t k,
               int sm_target, size_t workspace, bool fast_accumulation)
    : lt_(lt),
      a_(layout(operands, k, n)),
      b_(layout(operands, k, m)),
      d_(layout(CUDA_R_16BF, n, m)),
      workspace_(workspace) {
  cublasLtMatmulDesc_t desc = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  desc_ = LtDesc(desc);
  const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
  MESHSCOPE_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  MESHSCOPE_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
  // As Transformer Engine sets it (cublaslt_gemm.cu: fastAccuMode = use_split_accumulator ? 0 :
  // use_fp8): fast for an FP8 forward GEMM, 0 (cuBLASLt's default, partial sums promoted) for
  // its dgrad and wgrad GEMMs and for bf16.
  const int8_t fast = operands == CUDA_R_8F_E4M3 && fast_accumulation ? 1 : 0;
  MESHSCOPE_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  if (sm_target > 0) {
    const int32_t sms = sm_target;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof sms));
  }
  cublasLtMatmulPreference_t pref = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  Pref owner(pref);
  const uint64_t bytes = workspace;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a_.get(), b_.get(), d_.get(),
                                                        d_.get(), pref, 1, &result, &found));
  if (found < 1)
    throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(m) + " x " +
                             std::to_string(n) + " x " + std::to_string(k) +
                             (operands == CUDA_R_8F_E4M3
                                  ? " FP8 GEMM on this GPU (FP8 needs sm_89 or later)"
                                  : " bf16 GEMM"));
  algo_ = result.algo;
}

void LtGemm::run(cudaStream_t stream, const void* weight, const void* input, void* out,
                 void* workspace) const {
  const float alpha = 1, beta = 0;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatmul(lt_, desc_.get(), &alpha, weight, a_.get(), input, b_.get(),
                                        &beta, out, d_.get(), out, d_.get(), &algo_, workspace,
                                        workspace_, stream));
}

}  // namespace meshscope::kernels::cuda
