// Pipeline transfers holding processors (EngineInput::p2p_sm_share_by_tier) and receives posted
// ahead (EngineInput::recvs_posted_ahead; docs/ACCURACY.md item 33).
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/engine/engine.h"
#include "sim/engine/symmetry.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::engine {
namespace {

// Two stages, two microbatches: stage 0's forward takes 1500 ns, stage 1's 1000, every backward
// 2000; each transfer 100 bytes at a byte per ns, so 100 ns, on link tier 1.
const char* kTwoStages =
    "mesh dp=1 pp=2 tp=1\nmicrobatches 2\n"
    "rank 0: 0F0 0SEND_F0@1 0F1 0SEND_F1@1 0RECV_B0@1 0B0 0RECV_B1@1 0B1\n"
    "rank 1: 1RECV_F0@0 1F0 1B0 1SEND_B0@0 1RECV_F1@0 1F1 1B1 1SEND_B1@0\n";

EngineInput two_stages(const schedule::Schedule& s) {
  EngineInput in;
  in.schedule = &s;
  in.stages = {StageTiming{.forward_ns = 1500, .backward_ns = 2000, .p2p_bytes = 100},
               StageTiming{.forward_ns = 1000, .backward_ns = 2000, .p2p_bytes = 100}};
  in.links = {LinkSpec{1e9, 0}, LinkSpec{1e9, 0}};
  in.tier_of = [](int, int) { return 1; };
  return in;
}

TEST(EngineTransferHolds, ASendHoldsItsSendersProcessorsWhileItsTransferRuns) {
  const auto s = schedule::load(kTwoStages);
  EngineInput in = two_stages(s);
  // Without shares: rank 1 gets F0 at 1600 and F1 at 3100; its B0 ends at 4600, its F1 at 5600,
  // its B1 at 7600; rank 0's B1 waits for that gradient until 7700 and ends at 9700.
  EXPECT_EQ(simulate(in).step_time_ns, 9700);
  // A quarter held per transfer on tier 1: each rank's compute beside its own send runs at 0.75
  // for the send's 100 ns, 25 ns more: rank 0's F1 beside SEND_F0 ends at 3025, rank 1's F1 beside
  // SEND_B0 at 5625, and the step at 9725.
  in.p2p_sm_share_by_tier = {0.0, 0.25};
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 9725);
  EXPECT_EQ(r.ranks[0].sm_held_ns, 25);
  EXPECT_EQ(r.ranks[1].sm_held_ns, 25);
  // On tier 0 the share is 0: nothing is held.
  in.tier_of = [](int, int) { return 0; };
  EXPECT_EQ(simulate(in).step_time_ns, 9700);
}

TEST(EngineTransferHolds, AReceivePostedAheadHoldsItsReceiverUntilItsDataArrives) {
  const auto s = schedule::load(kTwoStages);
  EngineInput in = two_stages(s);
  in.p2p_sm_share_by_tier = {0.0, 0.25};
  in.recvs_posted_ahead = true;
  // Rank 1 posts RECV_F1 when its F0 ends (2600): F1's activation arrives at 3125, so its B0 runs
  // 525 ns at 0.75 and the rest, 1606.25 ns of work, from 3125: it ends at 4732 (132 ns later
  // than alone). Then F1 beside SEND_B0 ends at 5757, B1 at 7757; rank 0's B1 waits until 7857.
  // Rank 0 posts RECV_B0 when its F1 ends (no backward before it: its latest compute), but
  // computes nothing until it arrives: no time added there.
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 9857);
  EXPECT_EQ(r.ranks[1].sm_held_ns, 132 + 25);
  EXPECT_EQ(r.ranks[0].sm_held_ns, 25);
  // A receive whose data is there before it is posted holds nothing: with stage 0's forward at
  // 500 ns, F1's activation arrives at 1125, before rank 1's F0 ends at 1600.
  in.stages[0].forward_ns = 500;
  const EngineResult early = simulate(in);
  EXPECT_EQ(early.ranks[1].sm_held_ns, 25);  // SEND_B0 beside F1 only
}

TEST(EngineTransferHolds, IdenticalReplicasSimulatedOnceHoldAlike) {
  // Two replicas of the two stages (ranks 0, 1 and 2, 3): the representatives alone give every
  // rank what the full simulation gives it, holds included.
  const auto s = schedule::load(
      "mesh dp=2 pp=2 tp=1\nmicrobatches 2\n"
      "rank 0: 0F0 0SEND_F0@1 0F1 0SEND_F1@1 0RECV_B0@1 0B0 0RECV_B1@1 0B1\n"
      "rank 1: 1RECV_F0@0 1F0 1B0 1SEND_B0@0 1RECV_F1@0 1F1 1B1 1SEND_B1@0\n"
      "rank 2: 0F0 0SEND_F0@3 0F1 0SEND_F1@3 0RECV_B0@3 0B0 0RECV_B1@3 0B1\n"
      "rank 3: 1RECV_F0@2 1F0 1B0 1SEND_B0@2 1RECV_F1@2 1F1 1B1 1SEND_B1@2\n");
  EngineInput in = two_stages(s);
  in.p2p_sm_share_by_tier = {0.0, 0.25};
  in.recvs_posted_ahead = true;
  const EngineResult full = simulate(in);
  EXPECT_EQ(full.step_time_ns, 9857);  // each replica as the two stages alone (test above)
  ASSERT_TRUE(replicas_symmetric(in));
  const EngineResult once = simulate_symmetric(in);
  EXPECT_EQ(once.step_time_ns, full.step_time_ns);
  ASSERT_EQ(once.ranks.size(), full.ranks.size());
  for (size_t r = 0; r < full.ranks.size(); ++r)
    EXPECT_EQ(once.ranks[r].sm_held_ns, full.ranks[r].sm_held_ns) << "rank " << r;
}

TEST(EngineTransferHolds, SharesOutsideTheirRangeOrBesideSharedCoresAreRefused) {
  const auto s = schedule::load(kTwoStages);
  EngineInput in = two_stages(s);
  in.p2p_sm_share_by_tier = {0.0, 0.5};
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.p2p_sm_share_by_tier = {0.0, -0.1};
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.p2p_sm_share_by_tier = {0.0, 0.1, 0.1};  // more tiers than links
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.p2p_sm_share_by_tier = {0.0, 0.1};
  in.shared_processors = 1;
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::engine
