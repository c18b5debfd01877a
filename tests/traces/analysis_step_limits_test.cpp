// Kernel breakdown, stragglers and critical path on hand-built timelines whose answers are worked
// out by hand in the comments.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/traces/trace_fixtures.h"
#include "traces/analysis_critical_path.h"
#include "traces/analysis_kernels.h"
#include "traces/analysis_stragglers.h"

namespace meshscope::traces {
namespace {

using testing::add;

TEST(KernelBreakdown, TopKernelsByTotalTimeWithClassShares) {
  Timeline t;
  const uint16_t d = testing::add_device(t, 0);
  add(t, d, 0, SpanKind::kCompute, 0, 10, "A");
  add(t, d, 0, SpanKind::kCompute, 10, 30, "A");
  add(t, d, 0, SpanKind::kCompute, 30, 60, "B");
  add(t, d, 0, SpanKind::kMemcpy, 60, 100, "M");
  add(t, d, 1, SpanKind::kCollective, 0, 100, "C");      // overlaps: still counted in full
  add(t, d, 0, SpanKind::kAnnotation, 0, 1000, "step");  // not a kernel
  const auto k = kernel_breakdown(t, 3);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kernel_time_ns, 200);
  EXPECT_EQ(k[0].class_ns[static_cast<size_t>(KernelClass::kCompute)], 60);
  EXPECT_EQ(k[0].class_ns[static_cast<size_t>(KernelClass::kCommunication)], 100);
  EXPECT_EQ(k[0].class_ns[static_cast<size_t>(KernelClass::kMemory)], 40);
  ASSERT_EQ(k[0].top.size(), 3u);  // A and B tie at 30 ns: A first by name; B cut at top 3
  EXPECT_EQ(k[0].top[0].name, "C");
  EXPECT_DOUBLE_EQ(k[0].top[0].share, 0.5);
  EXPECT_EQ(k[0].top[1].name, "M");
  EXPECT_EQ(k[0].top[2].name, "A");
  EXPECT_EQ(k[0].top[2].count, 2);
  EXPECT_EQ(k[0].top[2].max_ns, 20);
}

// Three ranks run two all-reduces. First: begins 100, 150, 120 (rank 1 last: waits 50, 30).
// Second: 500, 400, 450 (rank 0 last: waits 100, 50).
Timeline three_ranks() {
  Timeline t;
  for (int r = 0; r < 3; ++r) testing::add_device(t, r);
  const int64_t first[] = {100, 150, 120};
  const int64_t second[] = {500, 400, 450};
  for (uint16_t r = 0; r < 3; ++r) {
    add(t, r, 1, SpanKind::kCollective, first[r], 200, "AR");
    add(t, r, 1, SpanKind::kCollective, second[r], 600, "AR");
  }
  return t;
}

TEST(Stragglers, LastArriverAndWaitsPerCollective) {
  const Timeline t = three_ranks();
  const StragglerAnalysis a = stragglers(t);
  ASSERT_EQ(a.instances.size(), 2u);
  EXPECT_EQ(a.instances[0].last_device, 1);
  EXPECT_EQ(a.instances[0].max_wait_ns, 50);
  EXPECT_EQ(a.instances[0].total_wait_ns, 80);
  EXPECT_EQ(a.instances[1].last_device, 0);
  EXPECT_EQ(a.instances[1].max_wait_ns, 100);
  EXPECT_EQ(a.instances[1].total_wait_ns, 150);
  ASSERT_EQ(a.devices.size(), 3u);
  EXPECT_EQ(a.devices[0].times_last, 1);
  EXPECT_EQ(a.devices[0].waited_ns, 50);
  EXPECT_EQ(a.devices[0].made_wait_ns, 150);
  EXPECT_EQ(a.devices[1].waited_ns, 100);
  EXPECT_EQ(a.devices[1].made_wait_ns, 80);
  EXPECT_EQ(a.devices[2].times_last, 0);
  EXPECT_EQ(a.devices[2].waited_ns, 30 + 50);
}

TEST(Stragglers, OneDeviceHasNone) {
  Timeline t;
  testing::add_device(t, 0);
  add(t, 0, 1, SpanKind::kCollective, 0, 10, "AR");
  EXPECT_TRUE(stragglers(t).instances.empty());
}

TEST(Stragglers, ACollectiveRanDifferentTimesOnItsDevicesIsNotPaired) {
  // Rank 1 ran every other "AR" of rank 0's (a profile cut short, two runs' files): its k-th is
  // not rank 0's k-th, so no AR is paired and no wait is made up; "BC" ran alike and is.
  Timeline t;
  for (int r = 0; r < 2; ++r) testing::add_device(t, r);
  for (int k = 0; k < 4; ++k) {
    add(t, 0, 1, SpanKind::kCollective, 1000 * k, 1000 * k + 100, "AR");
    if (k % 2 == 0) add(t, 1, 1, SpanKind::kCollective, 1000 * k, 1000 * k + 100, "AR");
  }
  add(t, 0, 1, SpanKind::kCollective, 5000, 5100, "BC");
  add(t, 1, 1, SpanKind::kCollective, 5030, 5100, "BC");
  const StragglerAnalysis a = stragglers(t);
  ASSERT_EQ(a.unpaired.size(), 1u);
  EXPECT_EQ(a.unpaired[0].name, "AR");
  EXPECT_EQ(a.unpaired[0].counts,
            (std::vector<std::pair<uint16_t, int64_t>>{{uint16_t{0}, 4}, {uint16_t{1}, 2}}));
  ASSERT_EQ(a.instances.size(), 1u);
  EXPECT_EQ(a.instances[0].name, "BC");
  EXPECT_EQ(a.instances[0].max_wait_ns, 30);
  EXPECT_NE(format_straggler_table(a, t).find("AR not paired across devices: 4 on "),
            std::string::npos);
  EXPECT_EQ(to_json(a, t)["unpaired"][0]["devices"][1]["spans"], 2);
}

// Rank 0 computes 0..100 and enters the all-reduce at 100; rank 1 computes until 250 and joins
// then; both end at 300. The path: rank 1's compute (250), its collective from 250 (0 left after
// the jump), rank 0's collective from 250 to 300 (50).
TEST(CriticalPath, FollowsTheLateRankThroughACollective) {
  Timeline t;
  testing::add_device(t, 0);
  testing::add_device(t, 1);
  add(t, 0, 0, SpanKind::kCompute, 0, 100, "K0");
  add(t, 0, 1, SpanKind::kCollective, 100, 300, "AR");
  add(t, 1, 0, SpanKind::kCompute, 0, 250, "K1");
  add(t, 1, 1, SpanKind::kCollective, 250, 300, "AR");
  t.steps.push_back({0, 300});
  const auto paths = critical_paths(t);
  ASSERT_EQ(paths.size(), 1u);
  const CriticalPath& p = paths[0];
  EXPECT_EQ(p.length_ns(), 300);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kCompute)], 250);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kCommunication)], 50);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kWait)], 0);
  EXPECT_EQ(p.by_rank.at(1), 250);
  EXPECT_EQ(p.by_rank.at(0), 50);
  ASSERT_GE(p.steps.size(), 2u);
  EXPECT_EQ(t.span_name(t.spans[p.steps.front().span]), "K1");
}

// One GPU with a compute stream (lane 0) and the host thread (lane 0 of its own device) that
// launches kernels on it.
struct GpuAndHost {
  Timeline t;
  uint16_t gpu = 0, host = 0;
  GpuAndHost() {
    gpu = t.add_device(0, "GPU 0");
    t.add_lane(gpu, "stream 7", LaneKind::kCompute);
    host = t.add_device(0, "host");
    t.add_lane(host, "thread", LaneKind::kHost);
  }
  // A launch call on the host thread over [call_begin, call_end) of a kernel over [begin, end),
  // joined by a flow; returns {launch span, kernel span}.
  std::pair<uint32_t, uint32_t> launch(int64_t call_begin, int64_t call_end, int64_t begin,
                                       int64_t end, const std::string& kernel,
                                       const std::string& call = "launch") {
    const uint32_t l = add(t, host, 0, SpanKind::kHost, call_begin, call_end, call);
    const uint32_t k = add(t, gpu, 0, SpanKind::kCompute, begin, end, kernel);
    t.add_flow(l, k);
    return {l, k};
  }
};

// A host thread launches K0 at 0 and K2 at 150, late: the GPU finished K0 at 100. The path runs
// L0 (5), waits 145 on the host thread, L1 (5), waits 5 for the launch to reach the GPU, K2 (40).
TEST(CriticalPath, ALateLaunchPutsTheHostOnThePath) {
  GpuAndHost g;
  const uint32_t l0 = g.launch(0, 5, 10, 100, "K0").first;
  const auto [l1, k2] = g.launch(150, 155, 160, 200, "K2");
  Timeline& t = g.t;
  t.steps.push_back({0, 200});
  const CriticalPath p = critical_paths(t).at(0);
  EXPECT_EQ(p.length_ns(), 200);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kHost)], 10);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kWait)], 150);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kCompute)], 40);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].span, l0);
  EXPECT_EQ(p.steps[1].span, l1);
  EXPECT_EQ(p.steps[2].span, k2);
  EXPECT_EQ(p.steps[2].wait_ns, 5);
}

// Without late launches the GPU's own order decides: K2 waits on K0 (lane), not on its launch.
TEST(CriticalPath, BackToBackKernelsStayOnTheGpu) {
  GpuAndHost g;
  g.launch(0, 5, 10, 100, "K0");
  g.launch(6, 9, 100, 180, "K1");
  const CriticalPath p = critical_paths(g.t).at(0);  // window: first to last GPU activity
  EXPECT_EQ(p.length_ns(), 170);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kCompute)], 170);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kHost)], 0);
}

// The host waits in cudaStreamSynchronize [20, 110) for K0 (ends 100), then launches K1 at 115.
// The path: K0 (10..100: 90), the sync's tail (100..110: 10), a 0 ns gap, the launch (5), 5 ns
// until K1 starts at 125, K1 (25).
TEST(CriticalPath, ASynchronizeCallHandsThePathBackToTheGpu) {
  GpuAndHost g;
  Timeline& t = g.t;
  const uint32_t k0 = add(t, g.gpu, 0, SpanKind::kCompute, 10, 100, "K0");
  add(t, g.host, 0, SpanKind::kHost, 20, 110, "cudaStreamSynchronize");
  g.launch(110, 115, 120, 145, "K1", "cudaLaunchKernel");
  t.steps.push_back({10, 145});
  const CriticalPath p = critical_paths(t).at(0);
  EXPECT_EQ(p.length_ns(), 135);
  EXPECT_EQ(p.steps.front().span, k0);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kCompute)], 90 + 25);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kHost)], 10 + 5);
  EXPECT_EQ(p.by_kind[static_cast<size_t>(PathKind::kWait)], 5);
}

}  // namespace
}  // namespace meshscope::traces
