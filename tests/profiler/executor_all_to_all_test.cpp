// Schedule-level ALLTOALL actions run on the executor: real traffic over the named group, traced
// as collective spans, leaving the workload's math (checked against one device) untouched.
#include <gtest/gtest.h>

#include <string>

#include "exec_test_util.h"
#include "sim/cost/collective_model.h"
#include "sim/cost/fit.h"
#include "sim/cost/hardware.h"

namespace meshscope::exec {
namespace {

constexpr int kSteps = 2;

// A dp=2 x tp=2 schedule whose ranks each exchange over `group` after every forward: `bytes`,
// times (1 + microbatch) when `growing` (so a trace holds several sizes to fit a line through).
schedule::Schedule with_all_to_all(mesh::GroupKind group, int64_t bytes, bool growing = false) {
  auto s = testing::make_schedule(schedule::Family::kDataParallel, {2, 1, 2}, 2);
  for (auto& program : s.ranks) {
    std::vector<schedule::Action> out;
    for (const schedule::Action& a : program) {
      out.push_back(a);
      if (a.kind != schedule::ActionKind::kForward) continue;
      schedule::Action x;
      x.kind = schedule::ActionKind::kAllToAll;
      x.group = group;
      x.stage = a.stage;
      x.microbatch = a.microbatch;
      x.bytes = growing ? bytes * (1 + a.microbatch) : bytes;
      out.push_back(x);
    }
    program = std::move(out);
  }
  return s;
}

TEST(ExecutorAllToAll, RunsOverItsGroupAndLeavesTheMathAsOneDevice) {
  const auto spec = testing::small_mlp_spec(7);
  const RunResult got = testing::run_cpu(with_all_to_all(mesh::GroupKind::kDp, 4096), spec, kSteps);
  testing::expect_equivalent(got, run_reference(spec, kSteps), "dp2 tp2 with all-to-alls");
  int exchanges = 0;
  for (const traces::Span& s : got.timeline.spans) {
    if (got.timeline.span_name(s).rfind("ALLTOALL(dp)", 0) != 0) continue;
    ++exchanges;
    EXPECT_EQ(s.kind, traces::SpanKind::kCollective);
    EXPECT_EQ(s.bytes, 4096);
    EXPECT_GE(s.end_ns, s.begin_ns);
  }
  // 4 ranks x 2 microbatches x kSteps steps.
  EXPECT_EQ(exchanges, 4 * 2 * kSteps);
}

TEST(ExecutorAllToAll, DefaultsToTheStageOutputAndRunsOnTheTpGroup) {
  const auto spec = testing::small_mlp_spec(7);
  const RunResult got = testing::run_cpu(with_all_to_all(mesh::GroupKind::kTp, 0), spec, 1);
  int exchanges = 0;
  for (const traces::Span& s : got.timeline.spans) {
    if (got.timeline.span_name(s).rfind("ALLTOALL(tp)", 0) != 0) continue;
    ++exchanges;
    // A microbatch of 4 rows (batch 16 over dp 2 and 2 microbatches) of the 16-wide output.
    EXPECT_EQ(s.bytes, 4 * 4 * 16);
  }
  EXPECT_EQ(exchanges, 4 * 2);
}

TEST(ExecutorAllToAll, BytesThatDoNotSplitIntoOneBlockPerMemberAreRefused) {
  try {
    testing::run_cpu(with_all_to_all(mesh::GroupKind::kDp, 4 * 3), testing::small_mlp_spec(7), 1);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("do not split into 2 equal blocks of floats"),
              std::string::npos)
        << e.what();
  }
}

TEST(ExecutorAllToAll, CalibrationFitsAllToAllsFromTheRunsTrace) {
  // `meshscope calibrate`'s fit over a run's trace: every all-to-all of the steps after the first
  // lands in its own fit (not the gradient all-reduces'), and the simulator then times an
  // all-to-all of the dp group with it.
  const auto s = with_all_to_all(mesh::GroupKind::kDp, 1 << 16, true);
  const RunResult got = testing::run_cpu(s, testing::small_mlp_spec(7), 3);
  const cost::Hardware hw = cost::find_hardware("cpu-local");
  const cost::Calibration c = cost::fit_calibration({&got.timeline}, hw, cost::Precision::kFp32);
  // 4 ranks x 2 microbatches x the 2 steps after the first.
  EXPECT_EQ(c.all_to_all.samples, 4 * 2 * 2);
  // The other collectives of those steps (each stage's ALLREDUCE(dp), the tp all-reduces inside
  // F and B) go to the collective fit, and no all-to-all among them.
  int others = 0;
  ASSERT_GE(got.timeline.steps.size(), 2u);
  for (const traces::SpanCollective& sc : got.timeline.collectives) {
    const traces::Span& span = got.timeline.spans[sc.span];
    if (span.begin_ns >= got.timeline.steps[1].begin_ns && span.bytes > 0 &&
        sc.collective.op != traces::CollectiveOp::kAllToAll) {
      ++others;
    }
  }
  EXPECT_GE(others, 4 * 2);  // at least the ALLREDUCE(dp) of each rank's stage per step
  EXPECT_EQ(c.collective.samples, others);
  ASSERT_GT(c.all_to_all.bandwidth_bytes_per_s, 0);
  const cost::GroupSpan dp{2, 1, 2};
  const double t =
      cost::collective_time(hw, cost::CollectiveKind::kAllToAll, 1 << 17, dp, &c).seconds;
  EXPECT_DOUBLE_EQ(
      t, c.all_to_all.alpha_ns * 1e-9 + 0.5 * (1 << 17) / c.all_to_all.bandwidth_bytes_per_s);
}

}  // namespace
}  // namespace meshscope::exec
