#include "traces/analysis_hta.h"

#include <gtest/gtest.h>

#include "tests/traces/trace_fixtures.h"
#include "traces/timeline.h"

namespace meshscope::traces {
namespace {

using testing::add;

// The kernel sequence below is laid out in ns: a 30 ns threshold keeps its gaps apart (the
// default, 30 µs, is HTA's effective one; KernelWaitThresholdDefaultsToThirtyMicroseconds).
constexpr HtaOptions k30ns{.consecutive_kernel_delay_ns = 30};

// A GPU with a compute stream and an NCCL stream, and a host thread whose launch calls start each
// kernel (a flow from the launch to the kernel, as the Kineto importer builds them).
class HtaKernelSequence : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = t_.add_device(0, "GPU 0");
    t_.add_lane(gpu_, "stream 7", LaneKind::kCompute);
    t_.add_lane(gpu_, "stream 13", LaneKind::kComm);
    host_ = t_.add_device(0, "host");
    t_.add_lane(host_, "thread 1", LaneKind::kHost);
    kernel(0, SpanKind::kCompute, 100, 200, 50);
    kernel(0, SpanKind::kCompute, 210, 300, 150);  // gap 10, launched early: kernel wait
    kernel(0, SpanKind::kMemcpy, 300, 320, 100);   // touches: no gap
    kernel(0, SpanKind::kCompute, 400, 500, 250);  // gap 80, launched early: other
    kernel(1, SpanKind::kCollective, 450, 650, 420);
    kernel(0, SpanKind::kCompute, 600, 700, 300);
    kernel(0, SpanKind::kCompute, 800, 900, 750);    // gap 100, launched after 700: host wait
    kernel(0, SpanKind::kCompute, 905, 950, -1);     // gap 5, launch unknown: kernel wait
    kernel(0, SpanKind::kCompute, 1000, 1010, 960);  // gap 50, launched after 950: host wait
  }

  void kernel(uint16_t lane, SpanKind kind, int64_t begin, int64_t end, int64_t launch) {
    const uint32_t k = add(t_, gpu_, lane, kind, begin, end, "kernel");
    if (launch < 0) return;
    const uint32_t l = add(t_, host_, 0, SpanKind::kHost, launch, launch + 5, "cudaLaunchKernel");
    t_.add_flow(l, k);
  }

  Timeline t_;
  uint16_t gpu_ = 0;
  uint16_t host_ = 0;
};

TEST_F(HtaKernelSequence, TemporalBreakdownFromFirstToLastKernel) {
  const auto hta = hta_breakdown(t_, k30ns);
  ASSERT_EQ(hta.size(), 1u);  // the host device has no GPU activity
  const HtaDeviceBreakdown& h = hta[0];
  EXPECT_EQ(h.device, gpu_);
  EXPECT_EQ(h.begin_ns, 100);
  EXPECT_EQ(h.end_ns, 1010);
  EXPECT_EQ(h.span_ns, 910);
  EXPECT_EQ(h.busy_ns, 100 + 110 + 300 + 100 + 45 + 10);
  EXPECT_EQ(h.idle_ns, 910 - 665);
  EXPECT_EQ(h.compute_ns, 100 + 90 + 100 + 100 + 100 + 45 + 10);
  EXPECT_EQ(h.communication_ns, 200);
  EXPECT_EQ(h.memory_ns, 20);
}

TEST_F(HtaKernelSequence, IdleSplitsIntoHostWaitKernelWaitOther) {
  const HtaDeviceBreakdown h = hta_breakdown(t_, k30ns).at(0);
  EXPECT_EQ(h.host_wait_ns, 100 + 50);
  EXPECT_EQ(h.kernel_wait_ns, 10 + 5);
  EXPECT_EQ(h.other_idle_ns, 80);
  EXPECT_EQ(h.host_wait_ns + h.kernel_wait_ns + h.other_idle_ns, h.idle_ns);
}

TEST_F(HtaKernelSequence, KernelWaitThresholdIsAnOption) {
  const HtaDeviceBreakdown h =
      hta_breakdown(t_, HtaOptions{.consecutive_kernel_delay_ns = 3}).at(0);
  EXPECT_EQ(h.kernel_wait_ns, 0);
  EXPECT_EQ(h.other_idle_ns, 80 + 10 + 5);
  EXPECT_EQ(h.host_wait_ns, 150);  // host wait does not depend on the threshold
}

TEST_F(HtaKernelSequence, KernelWaitThresholdDefaultsToThirtyMicroseconds) {
  EXPECT_EQ(HtaOptions{}.consecutive_kernel_delay_ns, 30'000);
  const HtaDeviceBreakdown h = hta_breakdown(t_).at(0);
  EXPECT_EQ(h.kernel_wait_ns, 10 + 5 + 80);  // every gap not charged to the host is < 30 µs
  EXPECT_EQ(h.other_idle_ns, 0);
}

TEST_F(HtaKernelSequence, CommunicationOverlapIsShareOfCommTimeWithCompute) {
  const HtaDeviceBreakdown h = hta_breakdown(t_, k30ns).at(0);
  EXPECT_EQ(h.comm_compute_overlap_ns, 50 + 50);  // [450,500) and [600,650)
  EXPECT_DOUBLE_EQ(h.comm_compute_overlap, 0.5);
}

TEST(HtaBreakdown, LaunchExactlyAtTheGapStartIsNotHostWait) {
  // HTA: host wait needs the launch call to start strictly after the previous kernel ended.
  Timeline t;
  const uint16_t gpu = testing::add_device(t, 0);
  const uint16_t host = t.add_device(0, "host");
  t.add_lane(host, "thread", LaneKind::kHost);
  add(t, gpu, 0, SpanKind::kCompute, 0, 100);
  const uint32_t k = add(t, gpu, 0, SpanKind::kCompute, 200, 300);
  t.add_flow(add(t, host, 0, SpanKind::kHost, 100, 110), k);
  const HtaDeviceBreakdown h = hta_breakdown(t, k30ns).at(0);
  EXPECT_EQ(h.host_wait_ns, 0);
  EXPECT_EQ(h.other_idle_ns, 100);
}

TEST(HtaBreakdown, NoCommunicationMeansZeroOverlapNotNaN) {
  Timeline t;
  const uint16_t d = testing::add_device(t, 0);
  add(t, d, 0, SpanKind::kCompute, 0, 10);
  const HtaDeviceBreakdown h = hta_breakdown(t).at(0);
  EXPECT_EQ(h.comm_compute_overlap, 0.0);
  EXPECT_EQ(h.idle_ns, 0);
}

}  // namespace
}  // namespace meshscope::traces
