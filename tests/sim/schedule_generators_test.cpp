// Generators: each family's compute order against orders derived by hand from the papers and
// Megatron-LM, the lowering into transfers / all-reduce / step, and config rejection.
#include "sim/schedule/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "sim/schedule/schedule_diff.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/validator.h"

namespace meshscope::schedule {
namespace {

std::string join(const std::vector<Action>& actions, bool compute_only) {
  std::string out;
  for (const Action& a : actions) {
    if (compute_only && !is_compute(a.kind)) continue;
    if (!out.empty()) out += ' ';
    out += to_string(a);
  }
  return out;
}

GeneratorConfig config(Family f, int dp, int pp, int tp, int m, int v = 1) {
  GeneratorConfig c;
  c.family = f;
  c.mesh = {.dp = dp, .pp = pp, .tp = tp};
  c.microbatches = m;
  c.virtual_stages = v;
  return c;
}

std::vector<std::string> compute_orders(const GeneratorConfig& c) {
  const Schedule s = generate(c);
  std::vector<std::string> out;
  for (const auto& rank : s.ranks) out.push_back(join(rank, true));
  return out;
}

TEST(Generators, FamilyNamesParse) {
  for (size_t i = 0; i < kFamilies.size(); ++i) {
    const Family f = static_cast<Family>(i);
    EXPECT_EQ(parse_family(name(f)), f);
    EXPECT_FALSE(kFamilies[i].description.empty());
  }
  EXPECT_FALSE(parse_family("2f2b").has_value());
}

TEST(Generators, LoweringOnlyTheFirstRanksGivesTheirProgramsAlone) {
  GeneratorConfig c = config(Family::kInterleaved, 2, 4, 1, 8, 2);
  c.gradient_bytes = {1000};
  const Schedule all = generate(c);
  c.lowered_ranks = 4;
  const Schedule first = generate(c);
  ASSERT_EQ(first.ranks.size(), all.ranks.size());
  for (size_t r = 0; r < all.ranks.size(); ++r) {
    if (r < 4) {
      EXPECT_EQ(first.ranks[r], all.ranks[r]) << r;
    } else {
      EXPECT_TRUE(first.ranks[r].empty()) << r;
    }
  }
  EXPECT_EQ(first.stage_owner, all.stage_owner);
}

TEST(Generators, OneFOneBWarmupIsPpMinusRankMinusOne) {
  // pp=4, m=8: rank r runs 3-r forwards, then F/B pairs, then the remaining backwards.
  const std::vector<std::string> expected = {
      "0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0F6 0B3 0F7 0B4 0B5 0B6 0B7",
      "1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1F6 1B4 1F7 1B5 1B6 1B7",
      "2F0 2F1 2B0 2F2 2B1 2F3 2B2 2F4 2B3 2F5 2B4 2F6 2B5 2F7 2B6 2B7",
      "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7",
  };
  EXPECT_EQ(compute_orders(config(Family::kOneFOneB, 1, 4, 1, 8)), expected);
  // Fewer microbatches than pp: the warm-up is capped by m.
  EXPECT_EQ(compute_orders(config(Family::kOneFOneB, 1, 4, 1, 2))[0], "0F0 0F1 0B0 0B1");
}

TEST(Generators, GpipeRunsAllForwardsThenAllBackwards) {
  const std::vector<std::string> expected = {
      "0F0 0F1 0F2 0F3 0B0 0B1 0B2 0B3",
      "1F0 1F1 1F2 1F3 1B0 1B1 1B2 1B3",
      "2F0 2F1 2F2 2F3 2B0 2B1 2B2 2B3",
  };
  EXPECT_EQ(compute_orders(config(Family::kGpipe, 1, 3, 1, 4)), expected);
}

TEST(Generators, NaiveRunsOneMicrobatchAtATime) {
  const std::vector<std::string> expected = {"0F0 0B0 0F1 0B1", "1F0 1B0 1F1 1B1",
                                             "2F0 2B0 2F1 2B1"};
  EXPECT_EQ(compute_orders(config(Family::kNaive, 1, 3, 1, 2)), expected);
}

TEST(Generators, InterleavedFollowsMegatronForPp2M4V2) {
  // Stages 0,2 on rank 0 and 1,3 on rank 1. Warm-up: 2(pp-r-1) + (v-1)pp = 4 on rank 0, 2 on
  // rank 1. Forward k: chunk (k mod 4) / 2, microbatch (k / 4) * 2 + k mod 2; backward chunks
  // reversed.
  const std::vector<std::string> expected = {
      "0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3",
      "1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3",
  };
  EXPECT_EQ(compute_orders(config(Family::kInterleaved, 1, 2, 1, 4, 2)), expected);
}

TEST(Generators, ZbH1DefersRankWeightGradsForPp4) {
  // 1F1B with B split into I and W; rank r keeps r W's pending until after its last I.
  const std::vector<std::string> expected = {
      "0F0 0F1 0F2 0F3 0I0 0W0 0F4 0I1 0W1 0F5 0I2 0W2 0F6 0I3 0W3 0F7 0I4 0W4 "
      "0I5 0W5 0I6 0W6 0I7 0W7",
      "1F0 1F1 1F2 1I0 1F3 1I1 1W0 1F4 1I2 1W1 1F5 1I3 1W2 1F6 1I4 1W3 1F7 1I5 1W4 "
      "1I6 1W5 1I7 1W6 1W7",
      "2F0 2F1 2I0 2F2 2I1 2F3 2I2 2W0 2F4 2I3 2W1 2F5 2I4 2W2 2F6 2I5 2W3 2F7 2I6 2W4 "
      "2I7 2W5 2W6 2W7",
      "3F0 3I0 3F1 3I1 3F2 3I2 3F3 3I3 3W0 3F4 3I4 3W1 3F5 3I5 3W2 3F6 3I6 3W3 3F7 3I7 3W4 "
      "3W5 3W6 3W7",
  };
  EXPECT_EQ(compute_orders(config(Family::kZbH1, 1, 4, 1, 8)), expected);
}

// Microbatches whose activations are held (F done, last gradient work not yet) at the worst point.
int peak_in_flight(const std::vector<Action>& rank) {
  int held = 0, peak = 0;
  for (const Action& a : rank) {
    if (a.kind == ActionKind::kForward) peak = std::max(peak, ++held);
    if (a.kind == ActionKind::kBackward || a.kind == ActionKind::kWeightGrad) --held;
  }
  return peak;
}

TEST(Generators, ZbH1PeakActivationsMatch1F1BAndGpipeHoldsAll) {
  const Schedule zb = generate(config(Family::kZbH1, 1, 4, 1, 8));
  const Schedule ofob = generate(config(Family::kOneFOneB, 1, 4, 1, 8));
  const Schedule gpipe = generate(config(Family::kGpipe, 1, 4, 1, 8));
  int zb_peak = 0, ofob_peak = 0;
  for (int r = 0; r < 4; ++r) {
    zb_peak = std::max(zb_peak, peak_in_flight(zb.ranks[r]));
    ofob_peak = std::max(ofob_peak, peak_in_flight(ofob.ranks[r]));
    EXPECT_EQ(peak_in_flight(ofob.ranks[r]), 4 - r);
    EXPECT_EQ(peak_in_flight(gpipe.ranks[r]), 8);
  }
  EXPECT_EQ(zb_peak, 4);
  EXPECT_EQ(ofob_peak, 4);
}

TEST(Generators, LowersTransfersAllReduceAndStepOnTheMesh) {
  GeneratorConfig c = config(Family::kOneFOneB, 2, 2, 1, 2);
  c.activation_bytes = {16, 0};
  c.gradient_bytes = {100, 200};
  const Schedule s = generate(c);
  EXPECT_EQ(s.name, "1f1b");
  EXPECT_EQ(s.num_stages, 2);
  EXPECT_EQ(s.stage_owner, (std::vector<int>{0, 1}));
  ASSERT_EQ(s.ranks.size(), 4u);
  // Ranks: 0 = dp0 pp0, 1 = dp0 pp1, 2 = dp1 pp0, 3 = dp1 pp1.
  EXPECT_EQ(join(s.ranks[0], false),
            "0F0 0SEND_F0@1:16 0F1 0SEND_F1@1:16 0RECV_B0@1:16 0B0 0RECV_B1@1:16 0B1 "
            "0ALLREDUCE(dp):100 0STEP");
  EXPECT_EQ(join(s.ranks[1], false),
            "1RECV_F0@0:16 1F0 1B0 1SEND_B0@0:16 1RECV_F1@0:16 1F1 1B1 1SEND_B1@0:16 "
            "1ALLREDUCE(dp):200 1STEP");
  EXPECT_EQ(join(s.ranks[2], false),
            "0F0 0SEND_F0@3:16 0F1 0SEND_F1@3:16 0RECV_B0@3:16 0B0 0RECV_B1@3:16 0B1 "
            "0ALLREDUCE(dp):100 0STEP");
  EXPECT_EQ(join(s.ranks[3], false),
            "1RECV_F0@2:16 1F0 1B0 1SEND_B0@2:16 1RECV_F1@2:16 1F1 1B1 1SEND_B1@2:16 "
            "1ALLREDUCE(dp):200 1STEP");
}

TEST(Generators, TpRanksRunTheSameProgramAndTalkToTheirTpPeer) {
  GeneratorConfig c = config(Family::kGpipe, 1, 2, 2, 2);
  c.activation_bytes = {8};
  const Schedule s = generate(c);
  // Ranks: 0,1 = pp0 tp0/tp1; 2,3 = pp1 tp0/tp1. No dp all-reduce with dp = 1.
  EXPECT_EQ(join(s.ranks[1], false),
            "0F0 0SEND_F0@3:8 0F1 0SEND_F1@3:8 0RECV_B0@3:8 0B0 0RECV_B1@3:8 0B1 0STEP");
  EXPECT_EQ(join(s.ranks[0], true), join(s.ranks[1], true));
  EXPECT_EQ(join(s.ranks[2], true), join(s.ranks[3], true));
  EXPECT_EQ(s.ranks[2][0].peer, 0);
  EXPECT_EQ(s.ranks[3][0].peer, 1);
}

TEST(Generators, InterleavedOnOneRankHasNoTransfers) {
  const Schedule s = generate(config(Family::kInterleaved, 1, 1, 1, 2, 3));
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.num_stages, 3);
  for (const Action& a : s.ranks[0]) EXPECT_FALSE(is_p2p(a.kind)) << to_string(a);
}

TEST(Generators, EachStageStepsRightAfterItsLastGradientWork) {
  GeneratorConfig c = config(Family::kInterleaved, 2, 2, 1, 4, 2);
  const Schedule s = generate(c);
  const std::string rank0 = join(s.ranks[0], false);
  // Stage 2's last backward (2B3) comes before stage 0's; each is followed by its all-reduce.
  EXPECT_NE(rank0.find("2B3 2SEND_B3@1 2ALLREDUCE(dp) 2STEP"), std::string::npos) << rank0;
  EXPECT_TRUE(rank0.ends_with("0B3 0ALLREDUCE(dp) 0STEP")) << rank0;
}

TEST(Generators, DataAndTensorFamiliesAreSingleStage) {
  const Schedule dp = generate(config(Family::kDataParallel, 4, 1, 1, 2));
  ASSERT_EQ(dp.ranks.size(), 4u);
  for (const auto& rank : dp.ranks) {
    EXPECT_EQ(join(rank, false), "0F0 0B0 0F1 0B1 0ALLREDUCE(dp) 0STEP");
  }
  const Schedule tp = generate(config(Family::kTensorParallel, 1, 1, 2, 1));
  EXPECT_EQ(join(tp.ranks[1], false), "0F0 0B0 0STEP");
}

TEST(Generators, EveryFamilyValidatesAndRoundTripsOnSeveralMeshes) {
  struct Mesh {
    int dp, pp, tp;
  };
  const std::vector<Mesh> pipeline_meshes = {{1, 1, 1}, {1, 2, 1}, {1, 4, 1}, {2, 4, 1},
                                             {1, 3, 2}, {2, 2, 2}, {3, 5, 1}};
  const std::vector<Mesh> flat_meshes = {{1, 1, 1}, {4, 1, 1}, {1, 1, 4}, {2, 1, 2}};
  int checked = 0;
  for (size_t i = 0; i < kFamilies.size(); ++i) {
    const Family f = static_cast<Family>(i);
    const bool flat = f == Family::kTensorParallel || f == Family::kDataParallel;
    for (const Mesh& m : flat ? flat_meshes : pipeline_meshes) {
      for (int mb : {1, 2, 3, 8, 12}) {
        for (int v : {1, 2, 3}) {
          GeneratorConfig c = config(f, m.dp, m.pp, m.tp, mb, v);
          c.activation_bytes = {64};
          c.gradient_bytes = {4096};
          try {
            check_config(c);
          } catch (const std::invalid_argument&) {
            continue;  // e.g. interleaved with mb % pp != 0
          }
          const Schedule s = generate(c);
          const ValidationResult r = validate(s);
          EXPECT_TRUE(r.ok()) << name(f) << " dp=" << m.dp << " pp=" << m.pp << " tp=" << m.tp
                              << " m=" << mb << " v=" << v << "\n"
                              << r.report(s);
          EXPECT_EQ(diff(load(dump(s)), s), "") << name(f);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 150);
}

std::string rejection(const GeneratorConfig& c) {
  try {
    generate(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << name(c.family);
  return "";
}

TEST(Generators, RejectsImpossibleConfigsWithAReason) {
  // 7 microbatches on 3 ranks: torch's rounds of max(1, 7 / 3) = 2 do not divide them.
  EXPECT_NE(rejection(config(Family::kInterleaved, 1, 3, 1, 7, 2))
                .find("divisible by max(1, microbatches / pp) = 2"),
            std::string::npos);
  EXPECT_NE(rejection(config(Family::kInterleaved, 1, 4, 1, 8, 1)).find("virtual stages >= 2"),
            std::string::npos);
  EXPECT_NE(rejection(config(Family::kOneFOneB, 1, 4, 1, 8, 2)).find("interleaved"),
            std::string::npos);
  EXPECT_NE(rejection(config(Family::kDataParallel, 2, 2, 1, 8)).find("pp = 1"), std::string::npos);
  EXPECT_NE(rejection(config(Family::kGpipe, 1, 2, 1, 0)).find("microbatches"), std::string::npos);
  EXPECT_NE(rejection(config(Family::kGpipe, 0, 2, 1, 1)).find("mesh"), std::string::npos);
  GeneratorConfig bytes = config(Family::kGpipe, 1, 4, 1, 4);
  bytes.activation_bytes = {1, 2};
  EXPECT_NE(rejection(bytes).find("activation bytes"), std::string::npos);
  bytes.activation_bytes = {1, 2, -3};
  EXPECT_NE(rejection(bytes).find("negative"), std::string::npos);
  bytes.activation_bytes = {};
  bytes.gradient_bytes = {1, 2, 3};
  EXPECT_NE(rejection(bytes).find("gradient bytes"), std::string::npos);
  EXPECT_NE(rejection(config(Family::kGpipe, 1024, 64, 8, 1024)).find("actions"),
            std::string::npos);
  // 2,048 ranks x 4,096 microbatches: some 60 M actions, several GiB in the simulator; refused
  // before anything is allocated. 16,384 GPUs with 256 microbatches still generate.
  EXPECT_NE(rejection(config(Family::kOneFOneB, 16, 16, 8, 4096)).find("more than 33554432"),
            std::string::npos);
  EXPECT_NO_THROW(check_config(config(Family::kOneFOneB, 128, 16, 8, 256)));
}

}  // namespace
}  // namespace meshscope::schedule
