// `meshscope calibrate --gemm-rates FILE --hardware NAME [--compare FILE] [--held-rates FILE]
// [--json] [--write-hardware OUT]`: measured GEMM rates (a CSV table, a PyTorch profiler trace
// recorded with shapes, or a folder of such traces) against a catalog entry's GEMM model
// (sim/cost/gemm_table_fit.h), and that fit written as a hardware file.
#pragma once

#include <string>

namespace meshscope::cli {

struct GemmRatesArgs {
  std::string file;     // a measured GEMM table or trace to check against the hardware's model
  std::string compare;  // rates of other shapes, set beside the model with that file's fit
  bool json = false;
  // The rates are of FP8 GEMMs (meshscope-kernel-check --gemm-rates --fp8): set beside the entry's
  // FP8 GEMM model (cost::fp8_gemm_view), and --write-hardware scales gemm_fp8_max.
  bool fp8 = false;
  // Rates of GEMMs held busy at the power limit (meshscope-kernel-check --sustained's held rate,
  // or a published one): each over the entry's burst rate for its shape, the sustained share it
  // measures; --write-hardware then writes that share over the fit's burst rate.
  std::string held;
  // A hardware file to write: the entry with its GEMM ceiling scaled by the fit (and its sustained
  // share 1 for rates taken from a trace, or the share --held-rates measures), for a config's
  // `cluster.gpu`.
  std::string write_hardware;
};

// Prints the check (text, or JSON with args.json); throws UserError on a file it cannot use.
void run_gemm_rates(const GemmRatesArgs& args, const std::string& hardware);

}  // namespace meshscope::cli
