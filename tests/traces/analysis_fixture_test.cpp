// The HTA breakdown on a real PyTorch profiler trace (rank 0 of a 2-rank A100 NCCL run from
// HolisticTraceAnalysis's public test data), committed in tests/fixtures.
#include <gtest/gtest.h>

#include <filesystem>

#include "traces/analysis.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

const std::filesystem::path kFixture = std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                       "tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";

TEST(AnalysisOnKinetoTrace, HtaBreakdownMatchesAnIndependentComputation) {
  const Timeline t = load_trace(kFixture);
  // The figures below were computed with a 30 ns kernel-wait threshold.
  const TimelineAnalysis a =
      analyze(t, AnalysisOptions{.hta = {.consecutive_kernel_delay_ns = 30}});
  ASSERT_EQ(a.hta.size(), 1u);  // one GPU; the host process has no GPU activity
  const HtaDeviceBreakdown& h = a.hta[0];
  // Expected values computed separately from the raw JSON with Python: the 3774 kernel, memcpy and
  // memset events' ts/dur taken to ns exactly, gaps of their union classified by the rule in
  // analysis_hta.h, launch time = ts of the cuda_runtime event with the same args.correlation.
  EXPECT_EQ(h.span_ns, 660551005);
  EXPECT_EQ(h.idle_ns, 503050991);
  EXPECT_EQ(h.host_wait_ns, 501050857);
  EXPECT_EQ(h.kernel_wait_ns, 0);
  EXPECT_EQ(h.other_idle_ns, 2000134);
  EXPECT_GT(h.communication_ns, 0);  // NCCL kernels recognised as communication
  EXPECT_GT(h.comm_compute_overlap, 0.0);
  EXPECT_LT(h.comm_compute_overlap, 1.0);
  // The host process is not an accelerator: no bubble row for it.
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].device, h.device);
}

// The real trace with its ProfilerStep markers taken out (one window, first to last GPU activity):
// its idle stretches (76% of the window is idle) are no detached activity.
TEST(AnalysisOnKinetoTrace, ARealTraceWithoutStepsHasNoDetachedActivity) {
  Timeline t = load_trace(kFixture);
  ASSERT_FALSE(t.steps.empty());
  t.steps.clear();
  EXPECT_FALSE(detached_activity(t).has_value());
}

}  // namespace
}  // namespace meshscope::traces
