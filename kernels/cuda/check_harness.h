// Checks each CUDA op against the CPU reference (kernels/cpu) on fresh random inputs:
// ‖out − ref‖ / ‖ref‖ under the precision's tolerance, with outputs poisoned (NaN) beforehand so
// an op that skips an element cannot pass. Used by the GoogleTests and meshscope-kernel-check.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace meshscope::kernels::cuda {

inline constexpr double kFp32Tolerance = 1e-5;
// TF32 keeps 10 of fp32's 23 mantissa bits. Tensor cores given fp32 operands as TF32 may drop the
// low 13 bits (truncation) rather than round: cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 does not say
// which; it is a property of the GPU's matrix units (Khattak & Mikaitis, "Accurate Models of
// NVIDIA Tensor Cores", arXiv:2512.07004, model their rounding, V100 to B200, bit by bit), so the
// tolerance allows for truncation. Truncation biases every input toward zero, so the error does
// not shrink with k: for this check's inputs (uniform in [-1, 1]) scripts/tf32_error_model.py
// gives 6.9e-4 truncated, 2.6e-4 rounded, against 2.1e-3 for bf16 inputs rounded to nearest.
// 1.5e-3: over twice the truncated figure, and a GEMM that silently ran with bf16 inputs fails.
inline constexpr double kTf32Tolerance = 1.5e-3;
inline constexpr double kBf16Tolerance = 1e-2;

struct CheckResult {
  std::string op;        // "gemm", "softmax_cross_entropy.grad", ...
  std::string variant;   // shape, precision and flags: "fp32 NT 67x45x129 beta=0"
  double rel_error = 0;  // +inf when the output holds NaN or Inf
  double tolerance = 0;
  bool passed = false;
  std::string note;  // why a behavioural check failed
};

struct CheckOptions {
  uint64_t seed = 0;  // 0: draw a fresh seed (printed in the results for reproduction)
};

// ‖out − ref‖₂ / ‖ref‖₂ in double; +inf if out has a non-finite value; |out| norm when ref is 0.
double relative_error(std::span<const float> out, std::span<const float> ref);

// Runs every check on the current CUDA device. Throws CudaError when the device fails.
std::vector<CheckResult> run_kernel_checks(const CheckOptions& options, uint64_t* seed_used);

// One line per result and a summary line; for the tool and gpu-check.sh's log.
std::string format_check_results(const std::vector<CheckResult>& results, uint64_t seed);

}  // namespace meshscope::kernels::cuda
