// The cpu executor's thread CPU time per action and the replay built from it: a run on more rank
// threads than most hosts have cores, replayed one device per rank, shows the bubbles theory
// gives for its schedule. No wall-clock figure is asserted.
#include <gtest/gtest.h>

#include <numeric>

#include "exec_test_util.h"
#include "sim/predict/measured_replay.h"

namespace meshscope::exec {
namespace {

using schedule::Family;
using testing::make_schedule_for;
using testing::run_cpu;

// 32 blocks of h = 128 on 8 stages: four layers per stage, so stage 0 (whose first layer needs no
// input gradient) and the last (which adds the loss) differ little from the others.
model::WorkloadSpec deep_mlp() {
  model::WorkloadSpec s;
  s.kind = model::WorkloadKind::kMlp;
  s.layers = 32;
  s.hidden = 128;
  s.batch = 64;
  s.lr = 0.01f;
  return s;
}

TEST(CpuTimeReplay, EveryActionOfEveryRankHasItsThreadCpuTime) {
  const model::WorkloadSpec spec = testing::small_mlp_spec(3);
  const schedule::Schedule s = make_schedule_for(spec, Family::kOneFOneB, {1, 4, 1}, 4);
  for (const int steps : {1, 2}) {
    const RunResult r = run_cpu(s, spec, steps);
    ASSERT_EQ(r.action_cpu_ns.size(), s.ranks.size());
    for (size_t rank = 0; rank < s.ranks.size(); ++rank) {
      ASSERT_EQ(r.action_cpu_ns[rank].size(), s.ranks[rank].size());
      for (size_t i = 0; i < s.ranks[rank].size(); ++i) {
        EXPECT_GE(r.action_cpu_ns[rank][i], 0);
        if (schedule::is_compute(s.ranks[rank][i].kind)) {
          EXPECT_GT(r.action_cpu_ns[rank][i], 0) << "rank " << rank << " action " << i;
        }
      }
    }
  }
}

TEST(CpuTimeReplay, ReplayOfEightRanksFollowsTheoryAcrossSchedules) {
  const model::WorkloadSpec spec = deep_mlp();
  const int p = 8, m = 8;
  auto replay = [&](Family f) {
    const schedule::Schedule s = make_schedule_for(spec, f, {1, p, 1}, m);
    const RunResult r = run_cpu(s, spec, 3, 120);
    return predict::replay_measured(s, r.action_cpu_ns).bubble_fraction;
  };
  const double closed = static_cast<double>(p - 1) / (m + p - 1);  // 46.7%
  const double gpipe = replay(Family::kGpipe);
  const double one = replay(Family::kOneFOneB);
  const double zb = replay(Family::kZbH1);
  // Equal costs give GPipe and 1F1B the same bubble; measured stages differ by a few percent.
  EXPECT_NEAR(gpipe, closed, 0.05);
  EXPECT_NEAR(one, closed, 0.05);
  EXPECT_NEAR(gpipe, one, 0.04);
  // Qi et al. 2023: ZB-H1 fills the drain with W (7/31 with T_F = T_I = T_W; the measured I
  // costs more than W, so less is filled: 36% against 47% in a run here).
  EXPECT_LT(zb, one - 0.05);
}

TEST(CpuTimeReplay, TheReplayIsPricedByTheMeasuredCosts) {
  const model::WorkloadSpec spec = testing::small_mlp_spec(5);
  const schedule::Schedule s = make_schedule_for(spec, Family::kGpipe, {1, 4, 1}, 4);
  const RunResult r = run_cpu(s, spec, 2);
  const predict::MeasuredReplay base = predict::replay_measured(s, r.action_cpu_ns);
  // Stage 3 three times as costly: its rank paces the pipeline and the replay says so.
  auto slow = r.action_cpu_ns;
  const int rank = s.stage_owner[3];
  int64_t added = 0;
  for (size_t i = 0; i < s.ranks[rank].size(); ++i) {
    if (!schedule::is_compute(s.ranks[rank][i].kind)) continue;
    added += 2 * slow[rank][i];
    slow[rank][i] *= 3;
  }
  const predict::MeasuredReplay slower = predict::replay_measured(s, slow);
  EXPECT_GE(slower.step_ns, base.step_ns + added * 9 / 10);
  EXPECT_GT(slower.device_bubbles.at(0), base.device_bubbles.at(0));
}

}  // namespace
}  // namespace meshscope::exec
