// The capture's buffer handling: out-of-order and concurrent completion, the final flush, drops.
#include <gtest/gtest.h>

#include <thread>

#include "profiler/capture/cupti/activity_capture.h"
#include "profiler/capture/cupti/decoder.h"
#include "tests/profiler/cupti_fake.h"

namespace meshscope::capture::cupti {
namespace {

using testing::FakeCupti;
using testing::SyntheticBuffer;

CompletedBuffer kernels(uint32_t first_correlation, int n, uint64_t dropped = 0) {
  SyntheticBuffer b;
  for (int i = 0; i < n; ++i) {
    b.add(testing::kernel_record("k", 10 * i + 10, 10 * i + 15, 0, 1, first_correlation + i));
  }
  return b.complete(dropped);
}

TEST(CuptiCapture, StopDisablesThenFlushesSoTheLastBuffersArrive) {
  FakeCupti api;
  ActivityCapture capture(api);
  capture.start();
  api.queue(kernels(1, 3));  // still inside CUPTI when stop() is called
  const RecordSet r = capture.stop();
  EXPECT_EQ(r.ops.size(), 3u);
  ASSERT_EQ(api.calls.size(), 3u);
  EXPECT_EQ(api.calls[0], "start");
  EXPECT_EQ(api.calls[1], "stop");
  EXPECT_EQ(api.calls[2], "flush");
  EXPECT_EQ(capture.clock().size(), 2u);  // a clock pair at each end
}

TEST(CuptiCapture, BuffersCompletedOutOfOrderAndFromAnotherThreadAreAllKept) {
  FakeCupti api;
  ActivityCapture capture(api);
  capture.start();
  std::thread cupti_thread([&] {
    api.deliver_now(kernels(100, 4));  // a later buffer completes first
    api.deliver_now(kernels(1, 2));
  });
  cupti_thread.join();
  api.queue(kernels(50, 3));
  const RecordSet r = capture.stop();
  EXPECT_EQ(r.ops.size(), 9u);
  EXPECT_EQ(r.buffers, 3u);
  std::vector<uint32_t> correlations;
  for (const auto& op : r.ops) correlations.push_back(op.correlation);
  std::sort(correlations.begin(), correlations.end());
  EXPECT_EQ(correlations, (std::vector<uint32_t>{1, 2, 50, 51, 52, 100, 101, 102, 103}));
}

TEST(CuptiCapture, DroppedRecordsAreSummedOverBuffers) {
  FakeCupti api;
  ActivityCapture capture(api);
  capture.start();
  api.deliver_now(kernels(1, 1, /*dropped=*/7));
  api.queue(kernels(2, 1, /*dropped=*/5));
  const RecordSet r = capture.stop();
  EXPECT_EQ(r.dropped_records, 12u);
}

TEST(CuptiCapture, EnablesTheNvtxKindsFirstAndTheKindsItDecodes) {
  FakeCupti api;
  ActivityCapture capture(api);
  capture.start();
  capture.stop();
  const std::vector<CUpti_ActivityKind> want = {CUPTI_ACTIVITY_KIND_MARKER,
                                                CUPTI_ACTIVITY_KIND_MARKER_DATA,
                                                CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                CUPTI_ACTIVITY_KIND_MEMCPY,
                                                CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                CUPTI_ACTIVITY_KIND_MEMSET,
                                                CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                                CUPTI_ACTIVITY_KIND_RUNTIME,
                                                CUPTI_ACTIVITY_KIND_DRIVER,
                                                CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  EXPECT_EQ(api.enabled, want);
}

TEST(CuptiCapture, TheFakeRecordsOnlyTheEnabledKindsAndNothingAfterStop) {
  FakeCupti api;
  std::vector<CompletedBuffer> got;
  const CUpti_ActivityKind kernels_only[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  api.start(kernels_only, [&](CompletedBuffer b) { got.push_back(std::move(b)); });
  api.launch_kernel("k", 0, 1, 100, 200);     // runtime + kernel record; only the kernel is on
  api.nvtx_push("F s0 mb0", 1, "meshscope");  // NVTX kinds are off
  api.nvtx_pop();
  api.stop();
  api.launch_kernel("after", 0, 1, 300, 400);
  api.flush();
  RecordSet r;
  for (auto& b : got) decode_buffer(api, b.buffer.data(), b.valid_bytes, r);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].name, "k");
  EXPECT_TRUE(r.api_calls.empty());
  EXPECT_TRUE(r.markers.empty());
  EXPECT_TRUE(r.payloads.empty());
}

TEST(CuptiCapture, StopWithoutStartReturnsNothing) {
  FakeCupti api;
  ActivityCapture capture(api);
  const RecordSet r = capture.stop();
  EXPECT_TRUE(r.ops.empty());
  EXPECT_TRUE(api.calls.empty());
}

}  // namespace
}  // namespace meshscope::capture::cupti
