// The cpu executor's thread CPU time per action and the replay built from it. Only what holds
// whatever the machine is doing is asserted here; that the replay of measured costs follows the
// schedules' closed forms is a measurement: bench/exec_cpu_time_replay_check.cpp.
#include <gtest/gtest.h>

#include "exec_test_util.h"
#include "sim/predict/measured_replay.h"

namespace meshscope::exec {
namespace {

using schedule::Family;
using testing::make_schedule_for;
using testing::run_cpu;

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

TEST(CpuTimeReplay, TheReplayIsPricedByTheMeasuredCosts) {
  // The table's shape is the run's; its values are set so the answer is known exactly (measured
  // CPU times vary from run to run, so no figure of theirs is asserted). GPipe, p = 4, m = 4,
  // free transfers: with every F and B costing c the step is (m + p - 1) * 2c = 14c. With stage 3
  // at 3c it paces the pipeline: its first forward starts at 3c, its 4 F and 4 B run back to back
  // until 3c + 24c, and the last backward then crosses stages 2, 1, 0: 30c.
  const model::WorkloadSpec spec = testing::small_mlp_spec(5);
  const schedule::Schedule s = make_schedule_for(spec, Family::kGpipe, {1, 4, 1}, 4);
  const RunResult r = run_cpu(s, spec, 2);
  ASSERT_EQ(r.action_cpu_ns.size(), s.ranks.size());
  constexpr int64_t c = 1'000'000;
  auto priced = [&](int64_t last_stage_cost) {
    auto table = r.action_cpu_ns;
    for (size_t rank = 0; rank < s.ranks.size(); ++rank) {
      for (size_t i = 0; i < s.ranks[rank].size(); ++i) {
        const schedule::Action& a = s.ranks[rank][i];
        table[rank][i] = !schedule::is_compute(a.kind) ? 0 : a.stage == 3 ? last_stage_cost : c;
      }
    }
    return predict::replay_measured(s, table);
  };
  const predict::MeasuredReplay even = priced(c);
  const predict::MeasuredReplay slow_last = priced(3 * c);
  // A free transfer still takes the engine's 1 ns: 6 of them lie on each critical path.
  EXPECT_NEAR(even.step_ns, 14 * c, 10);
  EXPECT_NEAR(even.bubble_fraction, 3.0 / 7.0, 1e-6);
  EXPECT_NEAR(slow_last.step_ns, 30 * c, 10);
  // Stage 0's rank computes 8c of the 30c: it idles 22/30 of the step.
  EXPECT_NEAR(slow_last.device_bubbles.at(0), 22.0 / 30.0, 1e-6);
  // And the run's own table prices something: every rank did work, so the step is not zero.
  EXPECT_GT(predict::replay_measured(s, r.action_cpu_ns).step_ns, 0);
}

}  // namespace
}  // namespace meshscope::exec
