// Action tokens: the torch-style text form round-trips and malformed tokens are rejected with why.
#include "sim/schedule/action.h"

#include <gtest/gtest.h>

namespace meshscope::schedule {
namespace {

Action parse_ok(std::string_view text) {
  std::string error;
  std::optional<Action> a = parse_action(text, &error);
  EXPECT_TRUE(a.has_value()) << text << ": " << error;
  return a.value_or(Action{});
}

std::string parse_error(std::string_view text) {
  std::string error;
  EXPECT_FALSE(parse_action(text, &error).has_value()) << text << " was accepted";
  return error;
}

TEST(Action, ParsesComputeTokens) {
  const Action f = parse_ok("2F0");
  EXPECT_EQ(f.kind, ActionKind::kForward);
  EXPECT_EQ(f.stage, 2);
  EXPECT_EQ(f.microbatch, 0);
  const Action i = parse_ok("1I3");
  EXPECT_EQ(i.kind, ActionKind::kInputGrad);
  EXPECT_EQ(i.stage, 1);
  EXPECT_EQ(i.microbatch, 3);
  EXPECT_EQ(parse_ok("10W12").kind, ActionKind::kWeightGrad);
  EXPECT_EQ(parse_ok("10W12").stage, 10);
  EXPECT_EQ(parse_ok("10W12").microbatch, 12);
  EXPECT_EQ(parse_ok("0B7").kind, ActionKind::kBackward);
}

TEST(Action, ParsesP2pWithPeerAndBytes) {
  const Action s = parse_ok("0SEND_F1@3:4096");
  EXPECT_EQ(s.kind, ActionKind::kSendForward);
  EXPECT_EQ(s.stage, 0);
  EXPECT_EQ(s.microbatch, 1);
  EXPECT_EQ(s.peer, 3);
  EXPECT_EQ(s.bytes, 4096);
  const Action bare = parse_ok("1RECV_B5");
  EXPECT_EQ(bare.kind, ActionKind::kRecvBackward);
  EXPECT_EQ(bare.peer, -1);
  EXPECT_EQ(bare.bytes, 0);
  const Action bytes_only = parse_ok("1SEND_B2:64");
  EXPECT_EQ(bytes_only.peer, -1);
  EXPECT_EQ(bytes_only.bytes, 64);
}

TEST(Action, ParsesCollectivesAndStep) {
  const Action ar = parse_ok("3ALLREDUCE(dp):1048576");
  EXPECT_EQ(ar.kind, ActionKind::kAllReduce);
  EXPECT_EQ(ar.group, mesh::GroupKind::kDp);
  EXPECT_EQ(ar.stage, 3);
  EXPECT_EQ(ar.microbatch, -1);
  EXPECT_EQ(ar.bytes, 1048576);
  EXPECT_EQ(parse_ok("0ALLGATHER(tp)").group, mesh::GroupKind::kTp);
  EXPECT_EQ(parse_ok("0REDUCESCATTER(world):8").kind, ActionKind::kReduceScatter);
  const Action step = parse_ok("0STEP");
  EXPECT_EQ(step.kind, ActionKind::kOptimizerStep);
  EXPECT_EQ(step.microbatch, -1);
}

TEST(Action, EveryKindRoundTrips) {
  std::vector<Action> actions = {
      {.kind = ActionKind::kForward, .stage = 2, .microbatch = 0},
      {.kind = ActionKind::kBackward, .stage = 0, .microbatch = 11},
      {.kind = ActionKind::kInputGrad, .stage = 1, .microbatch = 3},
      {.kind = ActionKind::kWeightGrad, .stage = 1, .microbatch = 3},
      {.kind = ActionKind::kSendForward, .stage = 0, .microbatch = 1, .peer = 3, .bytes = 4096},
      {.kind = ActionKind::kRecvForward, .stage = 1, .microbatch = 1, .peer = 0},
      {.kind = ActionKind::kSendBackward, .stage = 1, .microbatch = 1, .bytes = 7},
      {.kind = ActionKind::kRecvBackward, .stage = 0, .microbatch = 1},
      {.kind = ActionKind::kAllReduce, .group = mesh::GroupKind::kDp, .stage = 3, .bytes = 1 << 20},
      {.kind = ActionKind::kAllGather, .group = mesh::GroupKind::kTp, .stage = 0},
      {.kind = ActionKind::kReduceScatter, .group = mesh::GroupKind::kPp, .stage = 1, .bytes = 9},
      {.kind = ActionKind::kAllToAll, .group = mesh::GroupKind::kWorld, .stage = 0},
      {.kind = ActionKind::kOptimizerStep, .stage = 5},
  };
  for (const Action& a : actions) {
    EXPECT_EQ(parse_ok(to_string(a)), a) << to_string(a);
  }
  EXPECT_EQ(to_string(actions[0]), "2F0");
  EXPECT_EQ(to_string(actions[4]), "0SEND_F1@3:4096");
  EXPECT_EQ(to_string(actions[8]), "3ALLREDUCE(dp):1048576");
  EXPECT_EQ(to_string(actions[12]), "5STEP");
}

TEST(Action, RejectsMalformedTokensWithReason) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("3FOO2").find("unknown action 'FOO'"), std::string::npos);
  EXPECT_NE(parse_error("2F0x").find("'x'"), std::string::npos);
  EXPECT_NE(parse_error("-1F0").find("negative"), std::string::npos);
  EXPECT_NE(parse_error("1F-2").find("negative"), std::string::npos);
  EXPECT_NE(parse_error("0SEND_F1@-3").find("negative"), std::string::npos);
  EXPECT_NE(parse_error("2F").find("microbatch"), std::string::npos);
  EXPECT_NE(parse_error("F0").find("stage"), std::string::npos);
  EXPECT_NE(parse_error("0ALLREDUCE").find("group"), std::string::npos);
  EXPECT_NE(parse_error("0ALLREDUCE(xp)").find("unknown group 'xp'"), std::string::npos);
  // The moe blocks' groups are no schedule's: its mesh has no ep (sim/mesh/mesh.h).
  EXPECT_NE(parse_error("0ALLTOALL(ep)").find("group 'ep' is the moe blocks' own"),
            std::string::npos);
  EXPECT_NE(parse_error("0ALLREDUCE(edp)").find("group 'edp' is the moe blocks' own"),
            std::string::npos);
  EXPECT_NE(parse_error("0ALLREDUCE(dp").find("')'"), std::string::npos);
  EXPECT_NE(parse_error("99999999999F0").find("out of range"), std::string::npos);
  EXPECT_NE(parse_error("0SEND_F1@1:").find("byte count"), std::string::npos);
  // Peers and bytes belong to transfers only; a step has no microbatch.
  EXPECT_FALSE(parse_action("2F0@1").has_value());
  EXPECT_FALSE(parse_action("2F0:16").has_value());
  EXPECT_FALSE(parse_action("0ALLREDUCE(dp)@1").has_value());
  EXPECT_FALSE(parse_action("0STEP1").has_value());
  EXPECT_FALSE(parse_action("2f0").has_value());
  EXPECT_FALSE(parse_action(" 2F0").has_value());
}

}  // namespace
}  // namespace meshscope::schedule
