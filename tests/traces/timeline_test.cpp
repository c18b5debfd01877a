#include "traces/timeline.h"

#include <gtest/gtest.h>

namespace meshscope::traces {
namespace {

TEST(Timeline, SortSpansKeepsFlowsPointingAtTheSameSpans) {
  Timeline t;
  const uint16_t d0 = t.add_device(0, "rank 0");
  const uint16_t d1 = t.add_device(1, "rank 1");
  t.add_lane(d0, "compute", LaneKind::kCompute);
  t.add_lane(d1, "compute", LaneKind::kCompute);
  Span recv{.begin_ns = 50, .end_ns = 60, .name = t.strings.intern("RECV_F"), .device = d1};
  recv.kind = SpanKind::kRecv;
  Span send{.begin_ns = 40, .end_ns = 45, .name = t.strings.intern("SEND_F"), .device = d0};
  send.kind = SpanKind::kSend;
  Span late{.begin_ns = 100, .end_ns = 110, .device = d0};
  const uint32_t r = t.add_span(recv);
  t.add_span(late);
  const uint32_t s = t.add_span(send);
  t.add_flow(s, r);
  t.sort_spans();
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].from]), "SEND_F");
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].to]), "RECV_F");
  EXPECT_EQ(t.spans[0].begin_ns, 40);
  EXPECT_EQ(t.spans[1].begin_ns, 100);
  EXPECT_EQ(t.extent().begin_ns, 40);
  EXPECT_EQ(t.extent().end_ns, 110);
}

TEST(Timeline, SortSpansKeepsCollectivesOnTheirSpansAndSorted) {
  Timeline t;
  const uint16_t d0 = t.add_device(0, "rank 0");
  const uint16_t d1 = t.add_device(1, "rank 1");
  t.add_lane(d0, "comm", LaneKind::kComm);
  t.add_lane(d1, "comm", LaneKind::kComm);
  const auto span = [&](uint16_t d, int64_t b) {
    Span s{.begin_ns = b, .end_ns = b + 5, .device = d};
    s.kind = SpanKind::kCollective;
    return t.add_span(s);
  };
  const auto coll = [](CollectiveOp op, GroupKind g, int64_t bytes) {
    return Collective{
        .op = op, .group = g, .bytes = bytes, .algorithm = CollectiveAlgorithm::kAuto};
  };
  const uint32_t late = span(d1, 100);  // ends up last
  const uint32_t early = span(d0, 10);  // ends up first
  span(d0, 50);                         // no collective
  t.set_collective(late, coll(CollectiveOp::kAllGather, GroupKind::kTp, 7));
  t.set_collective(early, coll(CollectiveOp::kAllReduce, GroupKind::kDp, 9));  // inserted
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collectives[0].span, late);  // sorted by span index before sorting spans
  t.sort_spans();
  ASSERT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collectives[0].span, 0u);
  EXPECT_EQ(t.collectives[1].span, 2u);
  ASSERT_NE(t.collective_of(0), nullptr);
  EXPECT_EQ(t.collective_of(0)->op, CollectiveOp::kAllReduce);
  EXPECT_EQ(t.spans[0].begin_ns, 10);
  EXPECT_EQ(t.collective_of(1), nullptr);
  ASSERT_NE(t.collective_of(2), nullptr);
  EXPECT_EQ(t.collective_of(2)->group, GroupKind::kTp);
  EXPECT_EQ(t.spans[2].begin_ns, 100);
  t.set_collective(2, coll(CollectiveOp::kAllToAll, GroupKind::kWorld, 1));  // replaces
  EXPECT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(t.collective_of(2)->op, CollectiveOp::kAllToAll);
}

TEST(Timeline, WaitsFollowTheirSpansThroughSorting) {
  Timeline t;
  const uint16_t d = t.add_device(0, "rank 0");
  t.add_lane(d, "comm", LaneKind::kComm);
  const auto span = [&](int64_t b) { return t.add_span(Span{.begin_ns = b, .end_ns = b + 5}); };
  const uint32_t late = span(100);
  const uint32_t early = span(10);
  span(50);
  t.set_wait(late, 40);
  t.set_wait(early, 7);  // inserted before
  t.set_wait(2, 0);      // nothing to record
  ASSERT_EQ(t.waits.size(), 2u);
  t.sort_spans();
  EXPECT_EQ(t.reached_ns(0), 3);   // the early span, now first
  EXPECT_EQ(t.reached_ns(1), 50);  // no wait: its begin
  EXPECT_EQ(t.reached_ns(2), 60);
  t.set_wait(2, 20);  // replaces
  EXPECT_EQ(t.waits.size(), 2u);
  EXPECT_EQ(t.reached_ns(2), 80);
}

TEST(Timeline, StringTableInternsOnce) {
  StringTable st;
  EXPECT_EQ(st.get(0), "");
  const uint32_t a = st.intern("F s0 mb1");
  EXPECT_EQ(st.intern("F s0 mb1"), a);
  EXPECT_NE(st.intern("B s0 mb1"), a);
  EXPECT_EQ(st.get(a), "F s0 mb1");
}

TEST(Timeline, KindAndPhaseNamesRoundTrip) {
  for (size_t i = 0; i < kSpanKindNames.size(); ++i) {
    EXPECT_EQ(parse_span_kind(kSpanKindNames[i]), static_cast<SpanKind>(i));
  }
  for (size_t i = 0; i < kPhaseNames.size(); ++i) {
    EXPECT_EQ(parse_phase(kPhaseNames[i]), static_cast<Phase>(i));
  }
  EXPECT_FALSE(parse_span_kind("kernel").has_value());
}

}  // namespace
}  // namespace meshscope::traces
