// encode_timeline / decode_timeline: exact round trip of a real trace; damaged bytes are refused
// with the byte offset, never read out of bounds.
#include <gtest/gtest.h>

#include <filesystem>

#include "timeline_equal.h"
#include "trace_fixtures.h"
#include "traces/import/load_trace.h"
#include "traces/timeline_codec.h"

namespace meshscope::traces {
namespace {

Timeline sample() {
  return load_trace(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                    "traces/samples/1f1b_dp2_pp4_mb4_cpu.json");
}

TEST(TimelineCodec, RoundTripsEveryField) {
  const Timeline t = sample();
  ASSERT_FALSE(t.spans.empty());
  ASSERT_FALSE(t.flows.empty());
  ASSERT_FALSE(t.counters.empty());
  ASSERT_FALSE(t.steps.empty());
  testing::expect_same_timeline(decode_timeline(encode_timeline(t)), t);
}

TEST(TimelineCodec, RoundTripsTheRunDescriptorCollectivesAndWaits) {
  Timeline t = sample();
  t.run = testing::rich_run();
  t.set_collective(3, Collective{.op = CollectiveOp::kAllGather,
                                 .group = GroupKind::kPp,
                                 .bytes = 12345,
                                 .algorithm = CollectiveAlgorithm::kTree});
  t.set_wait(3, 777);
  t.set_wait(1, 5);
  const Timeline back = decode_timeline(encode_timeline(t));
  testing::expect_same_timeline(back, t);
  EXPECT_EQ(back.run.workload.batch, int64_t{1} << 40);
  EXPECT_EQ(back.reached_ns(3), t.spans[3].begin_ns - 777);
  // A collective naming no span is refused.
  t.collectives.back().span = static_cast<uint32_t>(t.spans.size());
  EXPECT_THROW(decode_timeline(encode_timeline(t)), std::runtime_error);
}

TEST(TimelineCodec, RoundTripsAnEmptyTimeline) {
  testing::expect_same_timeline(decode_timeline(encode_timeline(Timeline{})), Timeline{});
}

TEST(TimelineCodec, RefusesEveryTruncationWithItsOffset) {
  Timeline t;
  const uint16_t d = t.add_device(0, "rank 0");
  t.add_lane(d, "compute", LaneKind::kCompute);
  Span s;
  s.name = t.strings.intern("F s0 mb0");
  s.end_ns = 10;
  t.add_span(s);
  t.steps.push_back({0, 10});
  t.metadata["source"] = "cpu";
  const std::string bytes = encode_timeline(t);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(decode_timeline(std::string_view(bytes).substr(0, n)), std::runtime_error) << n;
  }
  try {
    decode_timeline(std::string_view(bytes).substr(0, 6));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "timeline bytes: truncated at byte 4 (8 more bytes needed, 2 left)");
  }
}

TEST(TimelineCodec, RefusesASpanOnADeviceThatDoesNotExist) {
  Timeline t;
  t.add_device(0, "rank 0");
  t.add_lane(0, "compute", LaneKind::kCompute);
  Span s;
  s.device = 3;
  t.spans.push_back(s);
  EXPECT_THROW(decode_timeline(encode_timeline(t)), std::runtime_error);
}

}  // namespace
}  // namespace meshscope::traces
