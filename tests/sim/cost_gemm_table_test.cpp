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
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/gemm_table_fit.h"
#include "sim/cost/hardware.h"
#include "tests/remove_at_exit.h"

namespace meshscope::cost {
namespace {

const std::string kTable =
    std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/xla/h100_bf16_matmul.csv";

TEST(CostGemmTable, TheShapeModelReproducesOpenXlasMeasuredH100Table) {
  const std::vector<MeasuredGemm> rows = read_gemm_table(kTable);
  ASSERT_EQ(rows.size(), 87u);
  const Hardware hw = find_hardware("h100-sxm");
  const GemmTableFit f = fit_gemm_table(hw, rows);
  // 2.2% today (scale 1.08 over the catalog's burst ceiling, 5.6 us a kernel).
  EXPECT_LT(f.rms, 0.03) << "scale " << f.scale << ", fixed " << f.fixed_s * 1e6 << " us";
  // The catalog's ceiling (gemm_max, from another source) within a fifth of the table's level.
  EXPECT_GT(f.scale, 0.9);
  EXPECT_LT(f.scale, 1.2);

  // The catalog's k_half sits at the table's optimum: over k_half 0, 16, ..., 512 the best fit is
  // no more than a quarter of a point of rms better. The table can tell: 0 or 256 fit it at
  // 4.5-4.9%, twice the error.
  const KHalfScan scan = scan_k_half(hw, rows);
  std::printf(
      "OpenXLA sm_90 table, %zu shapes: rms %.2f%% at the catalog's k_half %.0f (scale %.3f, "
      "%.2f us a kernel); best over the grid %.2f%% at k_half %.0f\n",
      rows.size(), 100 * f.rms, hw.efficiency.k_half, f.scale, f.fixed_s * 1e6, 100 * scan.best_rms,
      scan.best_k_half);
  EXPECT_LE(f.rms - scan.best_rms, 0.0025) << "the table fits best at k_half " << scan.best_k_half;
  for (const double k_half : {0.0, 256.0}) {
    Hardware h = hw;
    h.efficiency.k_half = k_half;
    EXPECT_GT(fit_gemm_table(h, rows).rms, f.rms + 0.015) << "k_half " << k_half;
  }
}

// A second, independent check at shapes OpenXLA's table does not have: bf16 GEMMs measured on an
// H100 inside six models' runs (TraceLens's reference reports, tests/fixtures/tracelens: whose
// header says how the rates were taken). Their sides are not multiples of every tile (788, 5185,
// 8944, 25089, 32256 rows), so tiles, waves and edge padding are tried here as the OpenXLA table
// cannot. The model is held to the fit OpenXLA's table gives it (no refit), on the shapes with
// every side 512 or more: the development rows' layer GEMMs all are, while the smaller ones are
// matrix-vector products and launch-bound kernels the throughput model is not for (reported, not
// bounded).
TEST(CostGemmTable, TheShapeModelAgainstGemmsMeasuredInsideModelRuns) {
  const Hardware hw = find_hardware("h100-sxm");
  const GemmTableFit xla = fit_gemm_table(hw, read_gemm_table(kTable));
  const std::vector<MeasuredGemm> all = read_gemm_table(
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/tracelens/h100_bf16_gemms.csv");
  ASSERT_EQ(all.size(), 55u);
  std::vector<MeasuredGemm> large;
  double squares = 0, lo = 1e9, hi = 0;
  for (const MeasuredGemm& g : all) {
    if (std::min({g.m, g.n, g.k}) < 512) continue;
    large.push_back(g);
    const double r = fitted_rate(hw, g, xla) / g.flops_per_s;
    squares += std::log(r) * std::log(r);
    lo = std::min(lo, r);
    hi = std::max(hi, r);
    std::printf("  b %lld, m %lld, n %lld, k %lld: measured %.1f, model %.1f TFLOP/s (x%.3f)\n",
                static_cast<long long>(g.b), static_cast<long long>(g.m),
                static_cast<long long>(g.n), static_cast<long long>(g.k), g.flops_per_s / 1e12,
                r * g.flops_per_s / 1e12, r);
  }
  ASSERT_EQ(large.size(), 26u);
  const double rms = std::sqrt(squares / static_cast<double>(large.size()));
  const GemmTableFit own = fit_gemm_table(hw, large);
  std::printf(
      "TraceLens H100 GEMMs, %zu with every side >= 512: with OpenXLA's fit %.2f%% rms (model over "
      "measured %.3f to %.3f); fitted on their own %.2f%% (scale %.3f, %.2f us a kernel); all %zu "
      "shapes fitted on their own %.2f%%\n",
      large.size(), 100 * rms, lo, hi, 100 * own.rms, own.scale, own.fixed_s * 1e6, all.size(),
      100 * fit_gemm_table(hw, all).rms);
  // 10.3% and 9.5% today (docs/ACCURACY.md, "Values checked against stored sources").
  EXPECT_LT(rms, 0.11);
  EXPECT_LT(own.rms, 0.10);
}

// The sustained share (efficiency.sustained: what a GPU held at its power limit keeps of the burst
// rate) against a third party's held rates: Azure's AI-benchmarking-guide ran cuBLASLt GEMMs after
// 10,000 warm-up calls on one H100, one H200 (FP8, the same software) and one A100 (FP16); the
// fixtures keep the shapes whose warm-up lasted 10 s or more (tests/fixtures/azure). Their rates
// over the entry's burst model (the FP8 one for FP8) are the share each board held, which the
// catalog takes from other sources: ml-engineering's H200 MSMF (the H100 an assumption from it)
// and Horace He's A100 run. A check, not a source: nothing in the catalog is fitted to it.
TEST(CostGemmTable, TheSustainedShareIsWhatAThirdPartysHeldRatesMeasure) {
  const std::string dir = std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/azure/";
  struct Board {
    const char* file;
    const char* entry;
    bool fp8;
  };
  std::vector<double> shares;
  for (const Board& b : {Board{"nd_h100_v5_fp8.csv", "h100-sxm", true},
                         Board{"nd_h200_v5_fp8.csv", "h200-sxm", true},
                         Board{"nd_a100_v4_fp16.csv", "a100-80gb", false}}) {
    const Hardware hw = find_hardware(b.entry);
    const std::vector<MeasuredGemm> rows = read_gemm_table(dir + b.file);
    ASSERT_EQ(rows.size(), 3u) << b.file;
    const GemmTableFit f = fit_gemm_table(b.fp8 ? fp8_gemm_view(hw) : hw, rows);
    std::printf("%s: held over %s's burst model %.3f (catalog sustained %.3f), %.2f%% rms\n",
                b.file, b.entry, f.scale, hw.efficiency.sustained, 100 * f.rms);
    // 0.856, 0.840 and 0.963 today, against 0.848, 0.848 and 0.97 (docs/ACCURACY.md, "Values
    // checked against stored sources").
    EXPECT_NEAR(f.scale / hw.efficiency.sustained, 1, 0.02) << b.file;
    EXPECT_LT(f.rms, 0.03) << b.file;
    shares.push_back(f.scale);
  }
  // The assumption behind h100-sxm's share, that it holds the H200's: measured side by side with
  // the same software, the two boards' shares are within 3% of each other.
  EXPECT_NEAR(shares[0] / shares[1], 1, 0.03);
}

// A measured table is read strictly: what is wrong is named with its file and line.
TEST(CostGemmTable, AMalformedTableNamesTheFileAndLine) {
  const std::string dir = meshscope::testing::process_temp_path("gemm_tables").string();
  std::filesystem::create_directories(dir);
  const std::pair<const char*, const char*> cases[] = {
      {"b,m,n,k\n1,2,3,4\n", ":1: want the header 'b,m,n,k,flops_per_s'"},
      {"# measured\nb,m,n,k,flops_per_s\n1,1024,1024,x,5e14\n", ":3: want b,m,n,k,flops_per_s"},
      {"b,m,n,k,flops_per_s\n1,0,1024,1024,5e14\n", ":2: sizes must be 1 or more"},
      {"b,m,n,k,flops_per_s\n1,8,8,8,-1\n", ":2: flops_per_s must be a positive number"},
      {"b,m,n,k,flops_per_s\n", ": no rows"},
      // A field too many, or one left empty, would shift the numbers into other columns.
      {"b,m,n,k,flops_per_s\n1,4096,4096,4096,1e12,5\n", ":2: 6 fields where the header has 5"},
      {"b,m,n,k,flops_per_s\n1,,4096,4096,4096,1e12\n", ":2: 6 fields where the header has 5"},
      {"b,m,n,k,flops_per_s,seconds\n1,64,64,64,1e12\n", ":2: 5 fields where the header has 6"},
      {"b,m,n,k,flops_per_s\n1,,4096,4096,1e12\n", ":2: want b,m,n,k,flops_per_s numbers"},
      {"b,m,n,k,flops_per_s\n1,4096x,4096,4096,1e12\n", ":2: want b,m,n,k,flops_per_s numbers"},
      {"b,m,n,k,flops_per_s\n1,4096.5,4096,4096,1e12\n", ":2: want b,m,n,k,flops_per_s numbers"},
      {"b,m,n,k,flops_per_s\n1,4096,4096,4096,1e12 TFLOP\n", ":2: want b,m,n,k,flops_per_s"},
      {"b,m,n,k,flops_per_s\n1,4096,4096,4096,nan\n", ":2: flops_per_s must be a positive"},
      // Operands no device holds were measured on none (one such row moved the fit's scale).
      {"b,m,n,k,flops_per_s\n1,2147483647,2147483647,2147483647,5e14\n",
       ":2: its bf16 operands would take 24.0 EiB, more than any device holds"}};
  int i = 0;
  for (const auto& [text, message] : cases) {
    const std::string path = dir + "/gemm_table_" + std::to_string(i++) + ".csv";
    std::ofstream(path) << text;
    try {
      read_gemm_table(path);
      ADD_FAILURE() << "read: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  // Nothing that is not a regular file is read: /dev/zero would be read for ever.
  for (const std::string& path : {std::string("/dev/zero"), dir}) {
    try {
      read_gemm_table(path);
      ADD_FAILURE() << "read: " << path;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": not a regular file"), std::string::npos)
          << e.what();
    }
  }
  // A column after the five is the measuring tool's own (its time per call) and is ignored.
  const std::string extra = dir + "/gemm_table_extra.csv";
  std::ofstream(extra) << "b,m,n,k,flops_per_s,seconds\n2,64,64,64,1e12,1e-6\n";
  ASSERT_EQ(read_gemm_table(extra).size(), 1u);
  EXPECT_EQ(read_gemm_table(extra)[0].b, 2);
  // A UTF-8 byte-order mark first (Excel's "CSV UTF-8") is no part of the header: it had read as
  // "want the header 'b,m,n,k,flops_per_s', got 'b,m,n,k,flops_per_s'", the mark unseen.
  const std::string bom = dir + "/gemm_table_bom.csv";
  std::ofstream(bom) << "\xEF\xBB\xBF"
                     << "b,m,n,k,flops_per_s\r\n2,64,64,64,1e12\r\n";
  ASSERT_EQ(read_gemm_table(bom).size(), 1u);
  EXPECT_EQ(read_gemm_table(bom)[0].m, 64);
}

}  // namespace
}  // namespace meshscope::cost
