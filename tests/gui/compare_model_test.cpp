#include "gui/view/compare_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

traces::Timeline pipeline(int pp, int microbatches, int64_t forward_ns) {
  SyntheticOptions o;
  o.pp = pp;
  o.microbatches = microbatches;
  o.forward_ns = forward_ns;
  o.jitter = 0;
  return make_synthetic_pipeline(o);
}

TEST(CompareModel, MatchesDevicesByRankAndReportsDifferences) {
  traces::Timeline a = pipeline(4, 8, 10'000);
  traces::Timeline b = pipeline(4, 8, 20'000);  // twice the forward cost
  const auto aa = traces::analyze(a);
  const auto ab = traces::analyze(b);
  const CompareModel m = compare_runs(a, aa, b, ab);
  ASSERT_EQ(m.devices.size(), 4u);
  EXPECT_GT(m.step_ratio(), 1.0);
  EXPECT_EQ(m.step_a_ns, aa.step_time_ns);
  for (const DeviceDiff& d : m.devices) {
    ASSERT_TRUE(d.device_a && d.device_b);
    // One step each: per step is the total.
    EXPECT_EQ(d.busy_delta_ns(), ab.devices[*d.device_b].busy_ns - aa.devices[*d.device_a].busy_ns);
    EXPECT_GT(*d.busy_delta_ns(), 0);
  }
}

TEST(CompareModel, RanksOnlyOneRunHasAreKeptAndClocksAligned) {
  traces::Timeline a = pipeline(2, 4, 10'000);
  traces::Timeline b = pipeline(4, 4, 10'000);
  for (auto& s : b.spans) {
    s.begin_ns += 1'000'000;
    s.end_ns += 1'000'000;
  }
  for (auto& w : b.steps) {
    w.begin_ns += 1'000'000;
    w.end_ns += 1'000'000;
  }
  const CompareModel m = compare_runs(a, traces::analyze(a), b, traces::analyze(b));
  ASSERT_EQ(m.devices.size(), 4u);
  EXPECT_FALSE(m.devices[3].device_a);
  EXPECT_TRUE(m.devices[3].device_b);
  EXPECT_EQ(m.devices[3].rank, 3);
  EXPECT_EQ(m.b_to_a_shift_ns, -1'000'000);
  // No difference for a rank only one run has (it had read as B's whole busy time).
  EXPECT_FALSE(m.devices[3].busy_delta_ns());
  EXPECT_FALSE(m.devices[3].idle_delta_ns());
  EXPECT_TRUE(m.devices[1].busy_delta_ns());
}

// A pp 2 run beside a pp 2 x tp 2 one: stage 1 is rank 1 in the first and rank 2 in the second.
// Devices pair by mesh place, so stage 1 meets stage 1 (by rank, each row had had one side only
// for the places the meshes do not share).
TEST(CompareModel, DevicesOfTwoMeshesPairByTheirPlace) {
  SyntheticOptions o;
  o.pp = 2;
  o.microbatches = 4;
  o.jitter = 0;
  const traces::Timeline a = make_synthetic_pipeline(o);
  o.tp = 2;
  const traces::Timeline b = make_synthetic_pipeline(o);
  const auto aa = traces::analyze(a), ab = traces::analyze(b);
  const CompareModel m = compare_runs(a, aa, b, ab);
  EXPECT_TRUE(m.matched_by_place);
  ASSERT_EQ(m.devices.size(), 4u);  // (pp0 tp0), (pp0 tp1), (pp1 tp0), (pp1 tp1)
  size_t both = 0;
  for (const DeviceDiff& d : m.devices) {
    if (!d.in_both()) continue;
    ++both;
    EXPECT_EQ(aa.devices[*d.device_a].coord.pp, ab.devices[*d.device_b].coord.pp);
    EXPECT_EQ(ab.devices[*d.device_b].coord.tp, 0);
  }
  EXPECT_EQ(both, 2u);
  const auto stage1 = std::find_if(m.devices.begin(), m.devices.end(), [&](const DeviceDiff& d) {
    return d.in_both() && aa.devices[*d.device_a].coord.pp == 1;
  });
  ASSERT_NE(stage1, m.devices.end());
  EXPECT_EQ(stage1->rank, 1);
  EXPECT_EQ(ab.devices[*stage1->device_b].rank, 2);
  EXPECT_NE(stage1->name, stage1->name_b);
}

// Runs of different step counts compare per step, as their step times do: the same pipeline
// profiled for 1 and for 3 steps has the same busy time per step.
TEST(CompareModel, DevicesCompareStepForStep) {
  SyntheticOptions o;
  o.pp = 2;
  o.microbatches = 4;
  o.jitter = 0;
  o.steps = 1;
  const traces::Timeline one = make_synthetic_pipeline(o);
  o.steps = 3;
  const traces::Timeline three = make_synthetic_pipeline(o);
  const auto a1 = traces::analyze(one), a3 = traces::analyze(three);
  ASSERT_EQ(a3.windows.size(), 3u);
  const CompareModel m = compare_runs(one, a1, three, a3);
  for (const DeviceDiff& d : m.devices) {
    EXPECT_EQ(d.busy_a_ns, a1.devices[*d.device_a].busy_ns);
    EXPECT_EQ(d.busy_b_ns, a3.devices[*d.device_b].busy_ns / 3);
    EXPECT_NEAR(static_cast<double>(*d.busy_delta_ns()), 0.0, 0.01 * d.busy_a_ns);
  }
}

}  // namespace
}  // namespace meshscope::gui
