// meshscope-kernel-check's command line (kernel_check_main.cpp has what each option does): read
// and checked before any file is read or device probed, so that a bad value is one line naming
// its option and exit 1 (not 2: no device) rather than a check run with another seed. Needs no
// device: tested without one.
#pragma once

#include <optional>
#include <string>

#include "kernels/cuda/check_harness.h"

namespace meshscope::kernels::cuda {

struct KernelCheckOptions {
  CheckOptions check;               // --seed N (0, the default: a fresh seed)
  bool versions = false;            // --versions: the libraries' versions, nothing else
  std::string gemm_shapes;          // --gemm-rates SHAPES.csv; empty: not asked
  bool fp8 = false;                 // --fp8: those shapes' e4m3 rates through cuBLASLt
  bool split_accumulation = false;  // --split-accumulation: --fp8's, as TE's dgrad and wgrad
  bool accumulate_fp32 = false;     // --accumulate-fp32: the bf16 GEMMs added into an fp32 C
  double sustained_s = 0;           // --sustained SECONDS, 0 < s <= 600; 0: not asked
  std::string sm_margin_cases;      // --sm-margin CASES.csv; empty: not asked
};

// What the command line asks for: the options to run with, the help text, or why it is refused.
struct KernelCheckCommandLine {
  std::optional<KernelCheckOptions> options;  // set when the tool is to run
  std::string help;                           // --help: print on stdout and exit 0
  // One line naming the option ("--seed: '-1' is not a whole number from 0 to ..."), printed
  // after "meshscope-kernel-check: "; exit 1.
  std::string error;
};

// Reads meshscope-kernel-check's arguments (argv[0] is the program): the options
// scripts/gpu-check.sh passes, each at most once.
KernelCheckCommandLine parse_kernel_check_options(int argc, const char* const* argv);

}  // namespace meshscope::kernels::cuda
