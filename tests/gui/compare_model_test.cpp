#include "gui/view/compare_model.h"

#include <gtest/gtest.h>

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
