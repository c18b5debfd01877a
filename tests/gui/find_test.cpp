#include "gui/view/find.h"

#include <gtest/gtest.h>

#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

using traces::LaneKind;
using traces::Span;
using traces::SpanKind;
using traces::Timeline;

TEST(FindQuery, ParsesMicrobatchFormsAndLowerCasesWords) {
  for (const char* text : {"mb 3", "mb=3", "MB3", "#3"}) {
    const FindQuery q = parse_find_query(text);
    ASSERT_TRUE(q.microbatch) << text;
    EXPECT_EQ(*q.microbatch, 3) << text;
    EXPECT_TRUE(q.words.empty()) << text;
  }
  const FindQuery q = parse_find_query("  SEND_F  mb 12 ");
  EXPECT_EQ(q.microbatch, 12);
  EXPECT_EQ(q.words, std::vector<std::string>{"send_f"});
  EXPECT_EQ(parse_find_query("mbx").words, std::vector<std::string>{"mbx"});
  EXPECT_EQ(parse_find_query("bubble").words, std::vector<std::string>{"idle"});
  EXPECT_TRUE(parse_find_query("   ").empty());
}

Timeline sample() {
  Timeline t;
  for (int r = 0; r < 2; ++r) t.add_lane(t.add_device(r, "rank"), "compute", LaneKind::kCompute);
  auto add = [&](uint16_t dev, int64_t b, const char* name, int mb, SpanKind kind) {
    Span s;
    s.device = dev;
    s.begin_ns = b;
    s.end_ns = b + 5;
    s.name = t.strings.intern(name);
    s.microbatch = mb;
    s.kind = kind;
    t.add_span(s);
  };
  add(0, 0, "F s0 mb0", 0, SpanKind::kCompute);
  add(0, 10, "F s0 mb1", 1, SpanKind::kCompute);
  add(1, 5, "F s1 mb0", 0, SpanKind::kCompute);
  add(1, 15, "SEND_F s1 mb1", 1, SpanKind::kSend);
  add(1, 0, "idle 5 ns", -1, SpanKind::kIdle);
  t.sort_spans();
  return t;
}

TEST(FindSpans, MatchesWordsAndMicrobatchInTimeOrder) {
  const Timeline t = sample();
  std::vector<uint32_t> out;
  EXPECT_TRUE(find_spans(t, parse_find_query("mb 0"), 100, out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(t.span_name(t.spans[out[0]]), "F s0 mb0");
  EXPECT_EQ(t.span_name(t.spans[out[1]]), "F s1 mb0");

  out.clear();
  EXPECT_TRUE(find_spans(t, parse_find_query("f mb1"), 100, out));
  ASSERT_EQ(out.size(), 1u);  // the word F; "SEND_F" is one word
  EXPECT_EQ(t.span_name(t.spans[out[0]]), "F s0 mb1");
  out.clear();
  find_spans(t, parse_find_query("send_f"), 100, out);
  ASSERT_EQ(out.size(), 1u);
  out.clear();
  find_spans(t, parse_find_query("SEND*"), 100, out);  // a wildcard inside a word
  ASSERT_EQ(out.size(), 1u);
  out.clear();
  find_spans(t, parse_find_query("send"), 100, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(t.spans[out[0]].kind, SpanKind::kSend);
}

TEST(FindSpans, IdleSpansOnlyWhenAskedForAndLimitIsReported) {
  const Timeline t = sample();
  std::vector<uint32_t> out;
  find_spans(t, parse_find_query("*s*"), 100, out);
  EXPECT_EQ(out.size(), 4u);
  for (uint32_t i : out) EXPECT_NE(t.spans[i].kind, SpanKind::kIdle);
  out.clear();
  find_spans(t, parse_find_query("bubble"), 100, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(t.spans[out[0]].kind, SpanKind::kIdle);
  out.clear();
  EXPECT_FALSE(find_spans(t, parse_find_query("compute"), 2, out));
  EXPECT_EQ(out.size(), 2u);
  out.clear();
  EXPECT_TRUE(find_spans(t, parse_find_query(""), 2, out));
  EXPECT_TRUE(out.empty());
}

// The pipeline the issue was seen on: `B mb 3` matched every span of microbatch 3 (the `b` of
// "mb3"), 40 of them; it means the backwards of microbatch 3: one per stage and replica.
TEST(FindSpans, WholeWordsAndFieldsNotSubstrings) {
  SyntheticOptions o;
  o.dp = 2;
  o.pp = 4;
  o.microbatches = 8;
  o.steps = 1;
  const Timeline t = make_synthetic_pipeline(o);
  std::vector<uint32_t> out;
  find_spans(t, parse_find_query("B mb 3"), 1000, out);
  EXPECT_EQ(out.size(), 8u);
  for (uint32_t i : out) {
    EXPECT_EQ(t.spans[i].phase, traces::Phase::kBackward);
    EXPECT_EQ(t.spans[i].microbatch, 3);
  }
  out.clear();
  find_spans(t, parse_find_query("backward stage 2 mb=3"), 1000, out);
  EXPECT_EQ(out.size(), 2u);  // stage 2 of each replica
  EXPECT_TRUE(matches_word("ncclDevKernel_AllReduce_Sum_f32(int)", "*allreduce*"));
  EXPECT_FALSE(matches_word("B s0 mb3", "b3"));
  EXPECT_TRUE(matches_word("B s0 mb3", "mb3"));
}

}  // namespace
}  // namespace meshscope::gui
