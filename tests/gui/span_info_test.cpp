#include "gui/view/span_info.h"

#include <gtest/gtest.h>

namespace meshscope::gui {
namespace {

using traces::LaneKind;
using traces::Span;
using traces::SpanKind;

TEST(SpanInfo, TooltipNamesWhatWhereWhenHowMuchAndThePeer) {
  traces::Timeline t;
  for (int r = 0; r < 2; ++r) {
    const uint16_t d = t.add_device(r, "rank " + std::to_string(r));
    t.add_lane(d, "comm", LaneKind::kComm);
  }
  Span send;
  send.device = 0;
  send.begin_ns = 5000;
  send.end_ns = 7000;
  send.kind = SpanKind::kSend;
  send.bytes = 4 << 20;
  send.stage = 1;
  send.microbatch = 3;
  send.name = t.strings.intern("SEND_F s1 mb3");
  Span recv = send;
  recv.device = 1;
  recv.kind = SpanKind::kRecv;
  const uint32_t s = t.add_span(send);
  const uint32_t r = t.add_span(recv);
  t.add_flow(s, r);
  t.sort_spans();
  const TrackIndex index(t);
  const std::string text = describe_span(t, index, 0, 1000);
  EXPECT_NE(text.find("SEND_F s1 mb3"), std::string::npos) << text;
  EXPECT_NE(text.find("stage 1"), std::string::npos) << text;
  EXPECT_NE(text.find("microbatch 3"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 0 / comm"), std::string::npos) << text;
  EXPECT_NE(text.find("start 4.000 \xC2\xB5s"), std::string::npos) << text;
  EXPECT_NE(text.find("duration 2.000 \xC2\xB5s"), std::string::npos) << text;
  EXPECT_NE(text.find("4.0 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("2097.15 GB/s"), std::string::npos) << text;  // 4 MiB in 2 us
  EXPECT_NE(text.find("-> rank 1"), std::string::npos) << text;
  EXPECT_NE(describe_span(t, index, 1, 1000).find("<- rank 0"), std::string::npos);
}

TEST(SpanInfo, LabelsShowPhaseAndMicrobatchOrTheBubblesLength) {
  traces::Timeline t;
  Span s;
  s.kind = SpanKind::kCompute;
  s.phase = traces::Phase::kBackward;
  s.microbatch = 7;
  s.end_ns = 10;
  s.name = t.strings.intern("B s2 mb7");
  EXPECT_EQ(short_label(t, s), "B7");
  EXPECT_EQ(long_label(t, s), "B s2 mb7");
  s.phase = traces::Phase::kWeightGrad;
  EXPECT_EQ(short_label(t, s), "W7");
  s.kind = SpanKind::kRecv;
  EXPECT_EQ(short_label(t, s), "R7");
  s.microbatch = -1;
  EXPECT_EQ(short_label(t, s), "B s2 mb7");
  Span idle;
  idle.kind = SpanKind::kIdle;
  idle.end_ns = 1'250'000;
  EXPECT_EQ(short_label(t, idle), "1.250 ms");
  EXPECT_EQ(long_label(t, idle), "idle 1.250 ms");
}

TEST(SpanInfo, FoldSaysHowManyAndHowLong) {
  EXPECT_EQ(describe_fold(1234, 0, 1'250'000), "1234 spans folded: 1.250 ms (zoom in to see them)");
}

}  // namespace
}  // namespace meshscope::gui
