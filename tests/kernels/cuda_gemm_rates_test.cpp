// meshscope-kernel-check --gemm-rates on a GPU: the rates themselves. The shapes file it reads and
// the CSV it writes are host code, tested without CUDA (gemm_shapes_test.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/gemm_rates.h"
#include "sim/cost/board.h"
#include "sim/cost/gemm_table_fit.h"
#include "sim/cost/hardware.h"

namespace meshscope::kernels::cuda {
namespace {

const std::string kShapes =
    std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/xla/h100_bf16_matmul.csv";

// The catalog entry of the first GPU's board (sim/cost/board.h), or "" when none describes it.
std::string board_entry(const DeviceProbe& probe) {
  return cost::hardware_for_board(probe.devices.front().name);
}

// On a GPU the catalog describes (an H100 or H200 SXM, an A100 SXM4 80GB, a B200): every rate
// measured and below its entry's bf16 peak, and the entry's GEMM shape function within 5% rms of
// them (OpenXLA's H100 table: 2.2%). Other boards have no entry with their tiles and SMs.
TEST(CudaGemmRates, MeasuredRatesFollowTheModelsShapeFunction) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) GTEST_SKIP() << no_device_message(probe);
  const std::string entry = board_entry(probe);
  if (entry.empty()) GTEST_SKIP() << probe.devices.front().name << ": no catalog entry";
  const cost::Hardware hw = cost::find_hardware(entry);
  const std::vector<GemmRate> rates = measure_gemm_rates(read_gemm_shapes(kShapes), 2, 5);
  ASSERT_EQ(rates.size(), 87u);
  std::vector<cost::MeasuredGemm> rows;
  for (const GemmRate& r : rates) {
    EXPECT_GT(r.flops_per_s, 0);
    EXPECT_LT(r.flops_per_s, hw.peak(cost::Precision::kBf16));
    rows.push_back({r.shape.b, r.shape.m, r.shape.n, r.shape.k, r.flops_per_s});
  }
  const cost::GemmTableFit fit = cost::fit_gemm_table(hw, rows);
  std::printf("measured on %s: the %s model within %.2f%% rms (scale %.3f, %.2f us)\n",
              probe.devices.front().name.c_str(), entry.c_str(), 100 * fit.rms, fit.scale,
              fit.fixed_s * 1e6);
  EXPECT_LT(fit.rms, 0.05);
}

// On a GPU: the weight-gradient GEMMs of the NeMo GPT-3 175B row (scripts/dev_gemm_shapes.csv)
// added into an fp32 C, as Megatron's gradient_accumulation_fusion runs them, measured beside the
// same GEMMs into a bf16 C: each rate under the bf16 peak and no faster than the bf16 output's
// (its epilogue moves four times the bytes), to within the timing's noise. How much slower is what
// gpu-check's row 2b records (docs/ACCURACY.md, Appendix B).
TEST(CudaGemmRates, WeightGradientsAccumulatedInFp32AreNoFasterThanIntoBf16) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) GTEST_SKIP() << no_device_message(probe);
  const std::vector<GemmShape> wgrad = {
      {1, 12288, 9216, 2048}, {1, 3072, 12288, 2048}, {1, 12288, 12288, 2048}};
  const std::vector<GemmRate> bf16 = measure_gemm_rates(wgrad, 2, 5);
  const std::vector<GemmRate> fp32 =
      measure_gemm_rates(wgrad, 2, 5, 1, GemmOutput::kFp32Accumulate);
  ASSERT_EQ(fp32.size(), wgrad.size());
  for (size_t i = 0; i < wgrad.size(); ++i) {
    EXPECT_GT(fp32[i].flops_per_s, 0);
    EXPECT_LT(fp32[i].flops_per_s, bf16[i].flops_per_s * 1.05) << "shape " << i;
    std::printf("%lld x %lld x %lld: into fp32 %.1f TFLOP/s, into bf16 %.1f\n",
                static_cast<long long>(wgrad[i].m), static_cast<long long>(wgrad[i].n),
                static_cast<long long>(wgrad[i].k), fp32[i].flops_per_s / 1e12,
                bf16[i].flops_per_s / 1e12);
  }
}

// FP8 rates (docs/ACCURACY.md items 50 and 51): shapes Transformer Engine never runs batched are
// refused before any device is touched, so the refusal holds on a machine without one.
TEST(CudaGemmRates, Fp8RatesRefuseABatchedShapeBeforeTouchingADevice) {
  try {
    measure_fp8_gemm_rates({{2, 1024, 1024, 1024}});
    ADD_FAILURE() << "a batched FP8 shape was measured";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("b 2 m 1024 n 1024 k 1024: FP8 rates are measured for b 1"),
        std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(measure_fp8_gemm_rates({}).empty());
}

// On a GPU whose catalog entry has an FP8 peak (Hopper, Blackwell): cuBLASLt's FP8 rate at
// TileLang's shapes (tests/fixtures/tilelang) under that dense FP8 peak and, at the deepest K,
// above the bf16 rate of the same shape; with split accumulation (TE's dgrad and wgrad) no faster
// than fast accumulation (TE's forward), to within the timing's noise.
TEST(CudaGemmRates, Fp8RatesAreUnderTheFp8PeakAndAboveBf16s) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) GTEST_SKIP() << no_device_message(probe);
  const std::string entry = board_entry(probe);
  if (entry.empty()) GTEST_SKIP() << probe.devices.front().name << ": no catalog entry";
  const cost::Hardware hw = cost::find_hardware(entry);
  if (!(hw.peak_fp8 > 0)) GTEST_SKIP() << entry << " has no FP8 peak";
  const std::vector<GemmShape> shapes = read_gemm_shapes(
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/tilelang/h800_fp8_matmul.csv");
  const std::vector<GemmRate> fp8 = measure_fp8_gemm_rates(shapes, Fp8Accumulation::kFast, 2, 5);
  const std::vector<GemmRate> split = measure_fp8_gemm_rates(shapes, Fp8Accumulation::kSplit, 2, 5);
  ASSERT_EQ(fp8.size(), shapes.size());
  ASSERT_EQ(split.size(), shapes.size());
  for (size_t i = 0; i < fp8.size(); ++i) {
    EXPECT_GT(fp8[i].flops_per_s, 0);
    EXPECT_LT(fp8[i].flops_per_s, hw.peak_fp8);
    EXPECT_GT(split[i].flops_per_s, 0);
    EXPECT_LT(split[i].flops_per_s, fp8[i].flops_per_s * 1.05) << "k " << shapes[i].k;
  }
  const std::vector<GemmRate> bf16 = measure_gemm_rates({shapes.back()}, 2, 5);
  EXPECT_GT(fp8.back().flops_per_s, bf16.front().flops_per_s);
  std::printf(
      "FP8 at 8192 x 8192 x %lld on %s: %.1f TFLOP/s, split accumulation %.1f (bf16 %.1f)\n",
      static_cast<long long>(shapes.back().k), probe.devices.front().name.c_str(),
      fp8.back().flops_per_s / 1e12, split.back().flops_per_s / 1e12,
      bf16.front().flops_per_s / 1e12);
}

}  // namespace
}  // namespace meshscope::kernels::cuda
