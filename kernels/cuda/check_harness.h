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
inline constexpr double kTf32Tolerance = 1e-3;
inline constexpr double kBf16Tolerance = 1e-2;

struct CheckResult {
  std::string op;         // "gemm", "softmax_cross_entropy.grad", ...
  std::string variant;    // shape, precision and flags: "fp32 NT 67x45x129 beta=0"
  double rel_error = 0;   // +inf when the output holds NaN or Inf
  double tolerance = 0;
  bool passed = false;
  std::string note;       // why a behavioural check failed
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
