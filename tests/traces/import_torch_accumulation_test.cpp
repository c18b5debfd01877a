// Gradient accumulation under torch's Schedule1F1B (tests/fixtures/torch/accum2_1F1B: pp 3,
// 3 microbatches, schedule.step() run twice in each profiled step before the optimizer step).
// Schedule1F1B writes no action ranges, so its actions are read from its ops; each iteration
// runs microbatches 0..2 again, and the job is read as 3 microbatches run twice, not as 6.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "traces/analysis.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::traces {
namespace {

const std::filesystem::path kJob =
    std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "torch" / "accum2_1F1B";
constexpr int kStages = 3;
constexpr int kMicrobatches = 3;
constexpr int kIterations = 2;

Timeline load_job() {
  const std::vector<std::filesystem::path> paths = {kJob};
  return load_traces(paths, ImportOptions{});
}

// One iteration of Schedule1F1B on stage s, as its runtime (_step_microbatches) runs it:
// min(n, stages - s) warm-up forwards, then one backward and one forward in turn, then the
// remaining backwards.
std::vector<std::string> one_iteration(int stage) {
  const int warmup = std::min(kMicrobatches, kStages - stage);
  const std::string s = std::to_string(stage);
  std::vector<std::string> out;
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(s + "F" + std::to_string(f));
  while (b < kMicrobatches) {
    out.push_back(s + "B" + std::to_string(b++));
    if (f < kMicrobatches) out.push_back(s + "F" + std::to_string(f++));
  }
  return out;
}

TEST(TorchGradientAccumulation, EachIterationRunsItsMicrobatchesFromZero) {
  const Timeline t = load_job();
  const std::map<int, std::vector<std::string>> orders = importer::torch_action_orders(t);
  ASSERT_EQ(orders.size(), static_cast<size_t>(kStages));
  for (const auto& [rank, actions] : orders) {
    std::vector<std::string> expected;
    for (int k = 0; k < kIterations; ++k) {
      const std::vector<std::string> once = one_iteration(rank);
      expected.insert(expected.end(), once.begin(), once.end());
    }
    // The single-stage schedules' gradient reduction after the last backward, as torch lists it.
    expected.push_back(std::to_string(rank) + "REDUCE_GRAD");
    expected.push_back(std::to_string(rank) + "WAIT_REDUCE_GRAD");
    EXPECT_EQ(actions, expected) << "rank " << rank;
  }
  EXPECT_EQ(t.run.microbatches, kMicrobatches);
  EXPECT_EQ(t.run.stages, kStages);
}

TEST(TorchGradientAccumulation, AnalyzeCountsTheIterationsMicrobatches) {
  const Timeline t = load_job();
  std::map<std::string, int> inferred_ranges;  // name -> how many
  for (const Span& s : t.spans) {
    const std::string name(t.span_name(s));
    if (name.ends_with(" (inferred)")) ++inferred_ranges[name];
    if (s.stage >= 0) {
      EXPECT_LT(s.microbatch, kMicrobatches) << name;
    }
  }
  // Each action once per iteration, named as torch names it.
  ASSERT_EQ(inferred_ranges.size(), static_cast<size_t>(kStages * 2 * kMicrobatches));
  for (const auto& [name, count] : inferred_ranges) EXPECT_EQ(count, kIterations) << name;

  const TimelineAnalysis a = analyze(t);
  ASSERT_EQ(a.devices.size(), static_cast<size_t>(kStages));
  std::set<int> ranks;
  for (const DeviceAnalysis& d : a.devices) {
    ranks.insert(d.rank);
    ASSERT_EQ(d.stage_phases.size(), 2u) << d.name;  // forward, backward of its one stage
    for (const StagePhaseTime& p : d.stage_phases) {
      EXPECT_EQ(p.stage, d.rank) << d.name;
      EXPECT_EQ(p.microbatches, kMicrobatches) << d.name;
      EXPECT_GT(p.compute_ns, 0) << d.name;
    }
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
}

}  // namespace
}  // namespace meshscope::traces
