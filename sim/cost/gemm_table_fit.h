// A table of measured GEMM rates (shape and FLOP/s per row) against the GEMM model of a catalog
// entry (compute_model.h): how far the model's shape function (tiles, waves, split k, k / (k +
// k_half)) is from the measurement, once the two things a table carries that the entry does not
// describe are fitted: a scale on the compute rate (the table's clock, library and board) and a
// fixed time per kernel. Read by the test against OpenXLA's sm_90 table
// (tests/sim/cost_gemm_table_test.cpp) and by `meshscope calibrate --gemm-rates`, which checks the
// rates scripts/gpu-check.sh measures on a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/cost/hardware.h"

namespace meshscope::cost {

// One measured batched GEMM: [b, m, k] x [b, k, n] at `flops_per_s` (2 b m n k over its time).
struct MeasuredGemm {
  int64_t b = 1, m = 0, n = 0, k = 0;
  double flops_per_s = 0;
};

// Reads CSV with the header `b,m,n,k,flops_per_s` (more columns after those are ignored, each
// row has as many fields as the header, each field a whole number); lines
// starting with '#' are comments. Throws std::runtime_error naming the file and line for anything
// else, a size below 1 or a rate that is not a positive number; and naming the file for one that
// is not a regular file of at most 16 MiB.
std::vector<MeasuredGemm> read_gemm_table(const std::string& path);

struct GemmTableFit {
  double rms = 0;      // of log(model rate / measured rate) over the rows
  double scale = 1;    // on the model's compute rate (a gemm_max of scale x the entry's fits)
  double fixed_s = 0;  // per kernel
};

// Fits the scale (0.2 to 5) and the fixed time (0 to 1 ms) to the rows by least squares on the
// log of the rates; each row's model time is max(compute / scale, memory) + fixed, at the
// precision's peak (bf16 unless the entry has none).
GemmTableFit fit_gemm_table(const Hardware& hw, const std::vector<MeasuredGemm>& rows);

// The model's rate for one shape (its flops_per_s is not read) with a fit's scale and fixed time:
// what `calibrate --gemm-rates --compare` puts beside the rates of shapes the fit did not see.
double fitted_rate(const Hardware& hw, const MeasuredGemm& shape, const GemmTableFit& fit);

// The entry as its FP8 GEMMs see it (options.fp8; docs/ACCURACY.md item 50): its bf16 peak,
// gemm_max and k_half replaced by peak_fp8, gemm_fp8_max and fp8_k_half, so that the functions here
// set FP8 rates beside its FP8 GEMM model (their memory term still counts 2-byte operands, which
// shapes large enough to be compute-bound do not feel). Throws std::invalid_argument for an entry
// without an FP8 rate.
Hardware fp8_gemm_view(const Hardware& hw);

// The k_half (0, step, ..., max) whose fit has the least rms, and that rms. `progress` (when set)
// is told after each k_half fitted (done, of how many): a table of 200,000 shapes takes minutes.
struct KHalfScan {
  double best_k_half = 0;
  double best_rms = 0;
};
KHalfScan scan_k_half(const Hardware& hw, const std::vector<MeasuredGemm>& rows, double step = 16,
                      double max = 512,
                      const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace meshscope::cost
