#include "gui/view/track_index.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace meshscope::gui {
namespace {

using traces::LaneKind;
using traces::Span;
using traces::SpanKind;
using traces::Timeline;

uint32_t add(Timeline& t, uint16_t dev, uint16_t lane, int64_t b, int64_t e,
             SpanKind kind = SpanKind::kCompute) {
  Span s;
  s.device = dev;
  s.lane = lane;
  s.begin_ns = b;
  s.end_ns = e;
  s.kind = kind;
  return t.add_span(s);
}

Timeline two_devices() {
  Timeline t;
  for (int r = 0; r < 2; ++r) {
    const uint16_t d = t.add_device(r, "rank " + std::to_string(r));
    t.add_lane(d, "compute", LaneKind::kCompute);
    t.add_lane(d, "comm", LaneKind::kComm);
  }
  return t;
}

TEST(TrackIndex, LaneWithoutOverlapIsOneContiguousRow) {
  Timeline t = two_devices();
  add(t, 0, 0, 0, 10);
  add(t, 0, 0, 10, 20);
  add(t, 0, 1, 5, 8);
  add(t, 1, 0, 3, 4);
  t.sort_spans();
  const TrackIndex index(t);
  ASSERT_EQ(index.rows().size(), 3u);
  const Row& r0 = index.rows()[0];
  EXPECT_EQ(r0.device, 0);
  EXPECT_EQ(r0.lane, 0);
  EXPECT_TRUE(r0.indices.empty());
  EXPECT_EQ(r0.size(), 2u);
  EXPECT_EQ(t.spans[r0.span_at(1)].begin_ns, 10);
  EXPECT_EQ(index.device_rows(0).size(), 2u);
  EXPECT_EQ(index.device_rows(1).size(), 1u);
  EXPECT_EQ(index.device_rows(1)[0].device, 1);
}

TEST(TrackIndex, NestedSpansStackOutermostFirstAndBandsNeverOverlap) {
  Timeline t = two_devices();
  add(t, 0, 0, 0, 100, SpanKind::kAnnotation);  // step annotation
  add(t, 0, 0, 0, 10);
  add(t, 0, 0, 20, 30);
  add(t, 0, 0, 25, 28);  // nested twice
  add(t, 0, 0, 100, 110);
  t.sort_spans();
  const TrackIndex index(t);
  const auto rows = index.device_rows(0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].depth, 0);
  EXPECT_EQ(t.spans[rows[0].span_at(0)].kind, SpanKind::kAnnotation);
  EXPECT_EQ(rows[0].size(), 2u);  // the annotation and the span after it
  EXPECT_EQ(rows[1].size(), 2u);
  EXPECT_EQ(rows[2].size(), 1u);
  EXPECT_EQ(t.spans[rows[2].span_at(0)].begin_ns, 25);
  size_t total = 0;
  for (const Row& r : rows) {
    total += r.size();
    for (size_t i = 1; i < r.size(); ++i) {
      EXPECT_LE(t.spans[r.span_at(i - 1)].end_ns, t.spans[r.span_at(i)].begin_ns);
    }
  }
  EXPECT_EQ(total, 5u);
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Row& r = index.rows()[index.row_of(i)];
    bool found = false;
    for (size_t k = 0; k < r.size(); ++k) found = found || r.span_at(k) == i;
    EXPECT_TRUE(found) << i;
  }
}

TEST(TrackIndex, RejectsUnsortedSpans) {
  Timeline t = two_devices();
  add(t, 0, 0, 50, 60);
  add(t, 0, 0, 0, 10);
  EXPECT_THROW(TrackIndex{t}, std::invalid_argument);
}

TEST(TrackIndex, FindsFlowsFromAndToASpanAndCullsThemByTime) {
  Timeline t = two_devices();
  const uint32_t send = add(t, 0, 1, 100, 110, SpanKind::kSend);
  const uint32_t recv = add(t, 1, 1, 100, 120, SpanKind::kRecv);
  const uint32_t send2 = add(t, 0, 1, 500, 510, SpanKind::kSend);
  const uint32_t recv2 = add(t, 1, 1, 505, 515, SpanKind::kRecv);
  t.add_flow(send, recv);
  t.add_flow(send2, recv2);
  t.sort_spans();
  const TrackIndex index(t);
  uint32_t s = 0;
  while (t.spans[s].begin_ns != 100 || t.spans[s].kind != SpanKind::kSend) ++s;
  const auto f = index.flow_from(s);
  ASSERT_TRUE(f);
  EXPECT_EQ(t.spans[t.flows[*f].to].kind, SpanKind::kRecv);
  EXPECT_EQ(index.flow_to(t.flows[*f].to), f);
  EXPECT_FALSE(index.flow_to(s));

  std::vector<uint32_t> out;
  EXPECT_TRUE(index.visible_flows(115, 200, 10, out));
  ASSERT_EQ(out.size(), 1u);  // the first reaches 120; the second starts at 500
  EXPECT_EQ(out[0], *f);
  out.clear();
  EXPECT_TRUE(index.visible_flows(0, 1000, 10, out));
  EXPECT_EQ(out.size(), 2u);
  out.clear();
  EXPECT_FALSE(index.visible_flows(0, 1000, 1, out));
  EXPECT_EQ(out.size(), 1u);
}

}  // namespace
}  // namespace meshscope::gui
