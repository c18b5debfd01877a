// The GEMM shape model (compute_model.h: tiles, waves, k / (k + k_half)) against a table of GEMM
// rates measured by others: OpenXLA's default matmul table for sm_90 (tests/fixtures/xla, where the
// file's header gives its source and how it was measured). The table's absolute level belongs to
// its own runs (clocks, library, board), and each of its kernels carries a fixed time the
// throughput model has no term for, so the comparison fits those two and nothing else: a scale on
// the compute rate and a fixed time per kernel. What is left is the shape model's own error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cost/compute_model.h"
#include "sim/cost/hardware.h"

namespace meshscope::cost {
namespace {

struct Measured {
  int64_t b, m, n, k;
  double flops_per_s;
};

std::vector<Measured> read_table() {
  const std::string path =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/xla/h100_bf16_matmul.csv";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<Measured> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 'b') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream s(line);
    Measured r{};
    s >> r.b >> r.m >> r.n >> r.k >> r.flops_per_s;
    EXPECT_FALSE(s.fail()) << path << ": " << line;
    rows.push_back(r);
  }
  return rows;
}

// Minimises f over [lo, hi] (f unimodal there) by golden-section search.
template <class F>
double golden_min(F f, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 60; ++i) {
    const double c = hi - r * (hi - lo), d = lo + r * (hi - lo);
    if (f(c) < f(d)) {
      hi = d;
    } else {
      lo = c;
    }
  }
  return (lo + hi) / 2;
}

struct Fit {
  double rms = 0;      // of log(model rate / measured rate)
  double scale = 1;    // on the model's compute rate
  double fixed_s = 0;  // per kernel
};

// The model's time for each measured shape, with the scale and the fixed time fitted.
Fit fit(const Hardware& hw, const std::vector<Measured>& rows) {
  const ComputeModel cm(hw, Precision::kBf16);
  std::vector<double> compute_s, memory_s, flops;
  for (const Measured& r : rows) {
    const double f = 2.0 * static_cast<double>(r.b * r.m * r.n * r.k);
    flops.push_back(f);
    compute_s.push_back(f / (hw.peak(Precision::kBf16) * gemm_efficiency(hw, r.m, r.n, r.k, r.b)));
    memory_s.push_back(cm.stream_seconds(2.0 * static_cast<double>(r.b) *
                                         static_cast<double>(r.m * r.k + r.k * r.n + r.m * r.n)));
  }
  auto rms = [&](double scale, double fixed_s) {
    double sum = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double t = std::max(compute_s[i] / scale, memory_s[i]) + fixed_s;
      const double e = std::log(flops[i] / t / rows[i].flops_per_s);
      sum += e * e;
    }
    return std::sqrt(sum / static_cast<double>(rows.size()));
  };
  Fit best;
  for (int round = 0; round < 8; ++round) {
    best.scale = golden_min([&](double s) { return rms(s, best.fixed_s); }, 0.5, 1.5);
    best.fixed_s = golden_min([&](double t) { return rms(best.scale, t); }, 0, 20e-6);
  }
  best.rms = rms(best.scale, best.fixed_s);
  return best;
}

TEST(CostGemmTable, TheShapeModelReproducesOpenXlasMeasuredH100Table) {
  const std::vector<Measured> rows = read_table();
  ASSERT_EQ(rows.size(), 87u);
  const Hardware hw = find_hardware("h100-sxm");
  const Fit f = fit(hw, rows);
  // 2.2% today (scale 1.08 over the catalog's burst ceiling, 5.6 us a kernel).
  EXPECT_LT(f.rms, 0.03) << "scale " << f.scale << ", fixed " << f.fixed_s * 1e6 << " us";
  // The catalog's ceiling (gemm_max, from another source) within a fifth of the table's level.
  EXPECT_GT(f.scale, 0.9);
  EXPECT_LT(f.scale, 1.2);

  // The catalog's k_half sits at the table's optimum: over k_half 0, 16, ..., 512 the best fit is
  // no more than a quarter of a point of rms better. The table can tell: 0 or 256 fit it at
  // 4.5-4.9%, twice the error.
  double best_rms = 1;
  int64_t best_k_half = -1;
  for (int64_t k_half = 0; k_half <= 512; k_half += 16) {
    Hardware h = hw;
    h.efficiency.k_half = static_cast<double>(k_half);
    const double r = fit(h, rows).rms;
    if (r < best_rms) {
      best_rms = r;
      best_k_half = k_half;
    }
  }
  std::printf(
      "OpenXLA sm_90 table, %zu shapes: rms %.2f%% at the catalog's k_half %.0f (scale %.3f, "
      "%.2f us a kernel); best over the grid %.2f%% at k_half %lld\n",
      rows.size(), 100 * f.rms, hw.efficiency.k_half, f.scale, f.fixed_s * 1e6, 100 * best_rms,
      static_cast<long long>(best_k_half));
  EXPECT_LE(f.rms - best_rms, 0.0025) << "the table fits best at k_half " << best_k_half;
  for (const double k_half : {0.0, 256.0}) {
    Hardware h = hw;
    h.efficiency.k_half = k_half;
    EXPECT_GT(fit(h, rows).rms, f.rms + 0.015) << "k_half " << k_half;
  }
}

}  // namespace
}  // namespace meshscope::cost
