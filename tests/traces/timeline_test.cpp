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
