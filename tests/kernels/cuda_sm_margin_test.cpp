// meshscope-kernel-check --sm-margin on a GPU: the measurement itself. The cases it measures (the
// development rows' GEMMs), the file it reads and the CSV it writes are host code, tested without
// CUDA (sm_margin_cases_test.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "kernels/cuda/sm_margin.h"

namespace meshscope::kernels::cuda {
namespace {

const std::string kCases = std::string(MESHSCOPE_SOURCE_DIR) + "/scripts/sm_margin_cases.csv";

// On a GPU: every way of the first case measured, and holding SMs beside the chunks never makes
// them faster than the chunks alone (a broken holder would leave every SM to the GEMM).
TEST(CudaSmMargin, MeasuresEveryWayOnAGpu) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) GTEST_SKIP() << no_device_message(probe);
  const std::vector<SmMarginCase> cases = read_sm_margin_cases(kCases);
  const std::vector<SmMarginTimes> times = measure_sm_margin({cases.front()}, 5);
  ASSERT_EQ(times.size(), 1u);
  const SmMarginTimes& t = times.front();
  for (double s : {t.whole, t.whole_target, t.split, t.split_target, t.held, t.held_target})
    EXPECT_GT(s, 0);
  EXPECT_GT(t.held, t.split * 0.98);
  std::printf("%s", format_sm_margin(times).c_str());
}

}  // namespace
}  // namespace meshscope::kernels::cuda
