// GEMM rates of this GPU as meshscope measures them (meshscope-kernel-check --gemm-rates, run by
// scripts/gpu-check.sh): a bf16 x bf16 -> bf16 batched GEMM [b, m, k] x [b, k, n] with fp32
// accumulation through cuBLAS (cublasGemmStridedBatchedEx, the call PyTorch's bf16 matmul makes),
// on normally distributed inputs (random data draws more power than zeros: the catalog's
// `sustained` source), timed by CUDA events around calls queued back to back. The rates are what
// `meshscope calibrate --gemm-rates` checks against a catalog entry's GEMM model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/gemm_shapes.h"

namespace meshscope::kernels::cuda {

// The shapes measured, their rates, and the files of both: host code (kernels/cpu/gemm_shapes.h).
using kernels::format_gemm_rates;
using kernels::GemmRate;
using kernels::GemmShape;
using kernels::read_gemm_shapes;

// Each shape: `warmup` untimed calls, then 5 batches of `iters` calls queued back to back, each
// batch timed as a whole, the batches taken in rounds over all the shapes (so clock drift falls on
// each alike); the median batch's time per call.
// Throws std::runtime_error (CUDA or cuBLAS failure, a shape too large for the device).
// Where a bf16 GEMM's product goes: a bf16 C (beta 0), or added into an fp32 C (beta 1), as the
// weight-gradient GEMMs of Megatron's gradient_accumulation_fusion accumulate into the fp32 main
// gradient (docs/ACCURACY.md, Appendix B: its epilogue reads and writes 8 bytes an element).
enum class GemmOutput { kBf16, kFp32Accumulate };

std::vector<GemmRate> measure_gemm_rates(const std::vector<GemmShape>& shapes, int warmup = 5,
                                         int iters = 20, uint64_t seed = 1,
                                         GemmOutput output = GemmOutput::kBf16);

// How an FP8 GEMM accumulates its products (cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM): fast, as
// Transformer Engine's forward GEMM asks, or with partial sums promoted (split), as its dgrad and
// wgrad GEMMs ask (module/base.py: _2X_ACC_FPROP False, _2X_ACC_DGRAD and _2X_ACC_WGRAD True).
enum class Fp8Accumulation { kFast, kSplit };

// The same for FP8 operands (docs/ACCURACY.md items 50, 51): e4m3 x e4m3 -> bf16 with fp32
// accumulation through cuBLASLt (cublasLtMatmul, TN, as Transformer Engine calls it for a
// linear), operands drawn normal and cast to e4m3, unit scales; `b` must be 1 (Transformer
// Engine's linears run no batched FP8 GEMM). Throws std::runtime_error as measure_gemm_rates, and
// when cuBLASLt has no FP8 algorithm for a shape (a GPU before sm_89).
std::vector<GemmRate> measure_fp8_gemm_rates(const std::vector<GemmShape>& shapes,
                                             Fp8Accumulation accumulation = Fp8Accumulation::kFast,
                                             int warmup = 5, int iters = 20, uint64_t seed = 1);

// Throws std::runtime_error for a size out of [1, 2^30] or an operand larger than any GPU holds.
void check_gemm_shape(const GemmShape& s);

// One shape's burst rate and the rates it holds (meshscope-kernel-check --sustained; the
// catalog's `sustained` is held over burst, docs/ACCURACY.md items 6 and 52). First `bursts`
// timed calls, each after the GPU sat idle `idle_s` and one untimed call (which takes the clock up
// from idle), so that each runs at the boost clock, as mamf-finder's MAMF takes its bursts; their
// median is the burst rate. Then the shape kept busy for `seconds` with back-to-back calls, so
// that the GPU reaches its power limit and the clock it holds there: the rate of each successive
// window of about `window_s`.
struct HeldGemm {
  double burst_flops_per_s = 0;
  std::vector<double> window_flops_per_s;
  // When the hold began and ended, seconds since the Unix epoch (the host's clock), to read a
  // power log sampled beside it.
  double hold_begin_unix_s = 0, hold_end_unix_s = 0;
};
HeldGemm hold_gemm(const GemmShape& shape, double seconds, double window_s, int bursts = 5,
                   double idle_s = 1.0, uint64_t seed = 1);

}  // namespace meshscope::kernels::cuda
