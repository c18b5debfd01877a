// The one rule for how an action appears in a Timeline (executor and simulator share it).
#include "sim/schedule/action_span.h"

#include <gtest/gtest.h>

namespace meshscope::schedule {
namespace {

Action parsed(std::string_view token) {
  std::string error;
  const auto a = parse_action(token, &error);
  EXPECT_TRUE(a) << error;
  return a.value_or(Action{});
}

TEST(ActionSpan, KindPhaseAndLabelOfEachActionFamily) {
  EXPECT_EQ(span_kind_of(ActionKind::kSendForward), traces::SpanKind::kSend);
  EXPECT_EQ(span_kind_of(ActionKind::kRecvBackward), traces::SpanKind::kRecv);
  EXPECT_EQ(span_kind_of(ActionKind::kAllToAll), traces::SpanKind::kCollective);
  EXPECT_EQ(span_kind_of(ActionKind::kWeightGrad), traces::SpanKind::kCompute);
  EXPECT_EQ(phase_of(ActionKind::kRecvForward), traces::Phase::kForward);
  EXPECT_EQ(phase_of(ActionKind::kSendBackward), traces::Phase::kBackward);
  EXPECT_EQ(phase_of(ActionKind::kInputGrad), traces::Phase::kInputGrad);
  EXPECT_EQ(span_label(parsed("2F5")), "F s2 mb5");
  EXPECT_EQ(span_label(parsed("0SEND_F1@1:4096")), "SEND_F s0 mb1");
  EXPECT_EQ(span_label(parsed("3ALLREDUCE(dp)")), "ALLREDUCE(dp) s3");
  EXPECT_EQ(span_label(parsed("1STEP")), "STEP s1");
}

// The executor and the simulator disagreed here once: gradient reduce-scatter (ZeRO) is part of
// the gradient synchronisation, like the all-reduce, so both are the optimizer phase.
TEST(ActionSpan, GradientSynchronisationIsTheOptimizerPhase) {
  EXPECT_EQ(phase_of(ActionKind::kAllReduce), traces::Phase::kOptimizer);
  EXPECT_EQ(phase_of(ActionKind::kReduceScatter), traces::Phase::kOptimizer);
  EXPECT_EQ(phase_of(ActionKind::kOptimizerStep), traces::Phase::kOptimizer);
  EXPECT_EQ(phase_of(ActionKind::kAllGather), traces::Phase::kNone);
}

}  // namespace
}  // namespace meshscope::schedule
