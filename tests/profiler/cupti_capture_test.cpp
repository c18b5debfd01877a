// The capture's buffer handling: out-of-order and concurrent completion, the final flush, drops.
#include <gtest/gtest.h>

#include <thread>

#include "profiler/capture/cupti/activity_capture.h"
#include "tests/profiler/cupti_fake.h"

namespace meshscope::capture::cupti {
namespace {

using testing::FakeCupti;
using testing::SyntheticBuffer;

CompletedBuffer kernels(uint32_t first_correlation, int n, uint64_t dropped = 0) {
  SyntheticBuffer b;
  for (int i = 0; i < n; ++i) {
    b.add(testing::kernel_record("k", 10 * i, 10 * i + 5, 0, 1, first_correlation + i));
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

TEST(CuptiCapture, StopWithoutStartReturnsNothing) {
  FakeCupti api;
  ActivityCapture capture(api);
  const RecordSet r = capture.stop();
  EXPECT_TRUE(r.ops.empty());
  EXPECT_TRUE(api.calls.empty());
}

}  // namespace
}  // namespace meshscope::capture::cupti
