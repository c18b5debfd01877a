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
    EXPECT_EQ(d.busy_delta_ns(), ab.devices[*d.device_b].busy_ns - aa.devices[*d.device_a].busy_ns);
    EXPECT_GT(d.busy_delta_ns(), 0);
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
}

}  // namespace
}  // namespace meshscope::gui
