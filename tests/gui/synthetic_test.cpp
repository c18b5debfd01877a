#include "gui/view/synthetic.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace meshscope::gui {
namespace {

using traces::Phase;
using traces::Span;
using traces::SpanKind;
using traces::Timeline;

std::vector<const Span*> compute_of(const Timeline& t, uint16_t device) {
  std::vector<const Span*> out;
  for (const Span& s : t.spans) {
    if (s.device == device && s.kind == SpanKind::kCompute) out.push_back(&s);
  }
  return out;
}

TEST(SyntheticPipeline, StageZeroFollowsOneFOneBWarmUp) {
  SyntheticOptions o;
  o.pp = 4;
  o.microbatches = 6;
  o.jitter = 0;
  const Timeline t = make_synthetic_pipeline(o);
  ASSERT_EQ(t.devices.size(), 4u);
  // Stage 0: pp - 1 = 3 warm-up forwards, then F B alternating, then the remaining backwards.
  std::string order;
  for (const Span* s : compute_of(t, 0)) {
    if (s->phase == Phase::kForward) order += "F";
    if (s->phase == Phase::kBackward) order += "B";
  }
  EXPECT_EQ(order, "FFFFBFBFBBBB");
  // The last stage has no warm-up: F B F B ...
  order.clear();
  for (const Span* s : compute_of(t, 3)) {
    if (s->phase == Phase::kForward) order += "F";
    if (s->phase == Phase::kBackward) order += "B";
  }
  EXPECT_EQ(order, "FBFBFBFBFBFB");
}

TEST(SyntheticPipeline, DependenciesAndTransfersAreRespected) {
  SyntheticOptions o;
  o.dp = 2;
  o.pp = 3;
  o.tp = 2;
  o.microbatches = 4;
  o.steps = 2;
  const Timeline t = make_synthetic_pipeline(o);
  ASSERT_EQ(t.devices.size(), 12u);
  ASSERT_EQ(t.steps.size(), 2u);
  // (dp, stage, phase, mb) -> compute span on tp 0, first step
  std::map<std::tuple<int, int, Phase, int>, const Span*> ops;
  auto op = [&](int dp, int s, Phase p, int k) { return ops.at(std::make_tuple(dp, s, p, k)); };
  for (const Span& s : t.spans) {
    const auto& c = t.devices[s.device].coord;
    if (s.kind == SpanKind::kCompute && c.tp == 0 && s.end_ns <= t.steps[0].end_ns &&
        s.microbatch >= 0) {
      ops[{c.dp, c.pp, s.phase, s.microbatch}] = &s;
    }
  }
  ASSERT_EQ(ops.size(), 2u * 3 * 2 * 4);
  for (int dp = 0; dp < 2; ++dp) {
    for (int k = 0; k < 4; ++k) {
      for (int s = 1; s < 3; ++s) {
        EXPECT_GE(op(dp, s, Phase::kForward, k)->begin_ns,
                  op(dp, s - 1, Phase::kForward, k)->end_ns + o.p2p_ns);
        EXPECT_GE(op(dp, s - 1, Phase::kBackward, k)->begin_ns,
                  op(dp, s, Phase::kBackward, k)->end_ns + o.p2p_ns);
      }
    }
  }
  // Every flow joins a send to a recv of the same microbatch on the neighbouring stage.
  EXPECT_EQ(t.flows.size(), 2u * 2 * 2 * 4 * 2 * 2);  // dp, tp, (pp-1) links, m, F and B, steps
  for (const auto& f : t.flows) {
    const Span& a = t.spans[f.from];
    const Span& b = t.spans[f.to];
    EXPECT_EQ(a.kind, SpanKind::kSend);
    EXPECT_EQ(b.kind, SpanKind::kRecv);
    EXPECT_EQ(a.microbatch, b.microbatch);
    EXPECT_EQ(std::abs(t.devices[a.device].coord.pp - t.devices[b.device].coord.pp), 1);
    EXPECT_EQ(t.devices[a.device].coord.dp, t.devices[b.device].coord.dp);
  }
  // Steps do not overlap: step 2 starts after every device's optimizer of step 1.
  EXPECT_LE(t.steps[0].end_ns, t.steps[1].begin_ns);
}

TEST(SyntheticPipeline, StepsForSpansHitsTheRequestedSize) {
  SyntheticOptions o;
  o.dp = 2;
  o.pp = 4;
  o.microbatches = 8;
  o.steps = steps_for_spans(o, 100'000);
  const Timeline t = make_synthetic_pipeline(o);
  EXPECT_GT(t.spans.size(), 98'000u);
  EXPECT_LE(t.spans.size(), 100'000u);
  EXPECT_EQ(t.spans.capacity(), t.spans.size());  // reserved exactly: no slack per span
  EXPECT_THROW(make_synthetic_pipeline(SyntheticOptions{.pp = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::gui
