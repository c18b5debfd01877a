// Random operands for the GEMM measurements (gemm_rates.h, sm_margin.h): normally distributed,
// since random data draws more power than zeros (the catalog's `sustained` source).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace meshscope::kernels::cuda {

// out[i], i < n: a standard normal hashed from (seed, i), queued on `stream`.
void fill_normal_bf16(cudaStream_t stream, __nv_bfloat16* out, size_t n, uint64_t seed);

}  // namespace meshscope::kernels::cuda
