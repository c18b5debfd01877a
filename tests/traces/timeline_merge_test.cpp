// Appending Timelines: the merge under multi-process runs and multi-rank trace folders.
#include "traces/timeline_merge.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace meshscope::traces {
namespace {

Timeline two_device_part(std::string_view name) {
  Timeline t;
  const uint16_t a = t.add_device(0, "a");
  const uint16_t b = t.add_device(1, "b");
  t.add_lane(a, "compute", LaneKind::kCompute);
  t.add_lane(b, "compute", LaneKind::kCompute);
  Span s;
  s.begin_ns = 10;
  s.end_ns = 20;
  s.device = a;
  s.kind = SpanKind::kSend;
  s.name = t.strings.intern(name);
  const uint32_t send = t.add_span(s);
  s.device = b;
  s.kind = SpanKind::kRecv;
  s.begin_ns = 15;
  s.end_ns = 30;
  const uint32_t recv = t.add_span(s);
  t.add_flow(send, recv);
  t.set_collective(recv, Collective{CollectiveOp::kAllToAll, GroupKind::kDp, 4096});
  t.set_wait(recv, 4);
  t.counters.push_back({b, "activation_bytes", {{12, 4.0}}});
  t.steps.push_back({5, 40});
  return t;
}

TEST(TimelineMerge, MovesTimesRemapsDevicesNamesAndFlows) {
  Timeline out;
  out.add_device(0, "x");
  out.add_device(1, "y");
  out.add_device(2, "z");
  out.strings.intern("already here");
  const Timeline part = two_device_part("SEND_F s0 mb1");
  const std::vector<int> map = {2, 0};
  append_timeline(out, part, map, 100);
  ASSERT_EQ(out.spans.size(), 2u);
  EXPECT_EQ(out.spans[0].device, 2);
  EXPECT_EQ(out.spans[1].device, 0);
  EXPECT_EQ(out.spans[0].begin_ns, 110);
  EXPECT_EQ(out.spans[1].end_ns, 130);
  EXPECT_EQ(out.span_name(out.spans[1]), "SEND_F s0 mb1");
  ASSERT_EQ(out.flows.size(), 1u);
  EXPECT_EQ(out.flows[0].from, 0u);
  EXPECT_EQ(out.flows[0].to, 1u);
  ASSERT_NE(out.collective_of(1), nullptr);  // the side table follows its span
  EXPECT_EQ(out.collective_of(1)->op, CollectiveOp::kAllToAll);
  EXPECT_EQ(out.collective_of(1)->bytes, 4096);
  EXPECT_EQ(out.collective_of(0), nullptr);
  EXPECT_EQ(out.reached_ns(1), 111);  // its wait too: begin 115 − 4
  EXPECT_EQ(out.reached_ns(0), 110);
  ASSERT_EQ(out.counters.size(), 1u);
  EXPECT_EQ(out.counters[0].device, 0);
  EXPECT_EQ(out.counters[0].samples[0].t_ns, 112);
  ASSERT_EQ(out.steps.size(), 1u);
  EXPECT_EQ(out.steps[0].begin_ns, 105);
}

TEST(TimelineMerge, StepsWidenByIndexAndDroppedDevicesTakeTheirFlows) {
  Timeline out;
  out.add_device(0, "x");
  const Timeline part = two_device_part("F s0 mb0");
  append_timeline(out, part, std::vector<int>{0, -1}, 0);
  EXPECT_EQ(out.spans.size(), 1u);
  EXPECT_TRUE(out.flows.empty());  // its recv was on the dropped device
  EXPECT_TRUE(out.collectives.empty());
  EXPECT_TRUE(out.counters.empty());
  append_timeline(out, part, std::vector<int>{0, -1}, -10);
  ASSERT_EQ(out.steps.size(), 1u);
  EXPECT_EQ(out.steps[0].begin_ns, -5);
  EXPECT_EQ(out.steps[0].end_ns, 40);
}

TEST(TimelineMerge, RefusesTimesBeyondTheLimitAndBadMaps) {
  Timeline out;
  out.add_device(0, "x");
  out.add_device(1, "y");
  const Timeline part = two_device_part("F s0 mb0");
  EXPECT_THROW(append_timeline(out, part, std::vector<int>{0, 1}, 1000, 500), std::out_of_range);
  EXPECT_THROW(append_timeline(out, part, std::vector<int>{0, 1}, INT64_MAX), std::out_of_range);
  EXPECT_THROW(append_timeline(out, part, std::vector<int>{0}, 0), std::invalid_argument);
  EXPECT_THROW(append_timeline(out, part, std::vector<int>{0, 7}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::traces
