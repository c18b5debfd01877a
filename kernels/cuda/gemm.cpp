// Row-major GEMM through cuBLAS (column-major): C^T = op(B)^T op(A)^T, so the operands swap.
#include <cuda_bf16.h>

#include "kernels/cuda/ops.h"

namespace meshscope::kernels::cuda {
namespace {

// Elements a row-major rows x cols matrix with row stride ld spans, without reading past its end.
size_t span_elements(int rows, int cols, int ld) {
  return rows == 0 || cols == 0 ? 0 : static_cast<size_t>(rows - 1) * ld + cols;
}

}  // namespace

void gemm(Context& ctx, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const void* pa = a;
  const void* pb = b;
  cudaDataType_t in_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (ctx.precision()) {
    case GemmPrecision::kFp32:
      compute = CUBLAS_COMPUTE_32F;  // pedantic fp32: no TF32 down-conversion
      break;
    case GemmPrecision::kTf32:
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case GemmPrecision::kBf16: {
      // Storage of A is (trans_a ? k x m : m x k) row-major; likewise B.
      const size_t a_elems = trans_a ? span_elements(k, m, lda) : span_elements(m, k, lda);
      const size_t b_elems = trans_b ? span_elements(n, k, ldb) : span_elements(k, n, ldb);
      // B starts 16-byte aligned, as cuBLAS's vectorized kernels want their operands.
      const size_t b_at = (a_elems + 7) / 8 * 8;
      auto* scratch =
          static_cast<__nv_bfloat16*>(ctx.scratch((b_at + b_elems) * sizeof(__nv_bfloat16)));
      float_to_bf16(ctx.stream(), a_elems, a, scratch);
      float_to_bf16(ctx.stream(), b_elems, b, scratch + b_at);
      pa = scratch;
      pb = scratch + b_at;
      in_type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    }
    case GemmPrecision::kCount:
      break;
  }
  MESHSCOPE_CUBLAS_CHECK(cublasGemmEx(ctx.cublas(), op_b, op_a, n, m, k, &alpha, pb, in_type, ldb,
                                      pa, in_type, lda, &beta, c, CUDA_R_32F, ldc, compute,
                                      CUBLAS_GEMM_DEFAULT));
}

}  // namespace meshscope::kernels::cuda
