// torch's Schedule1F1B writes no action ranges, so its actions are read from its ops
// (torch_inferred_actions.h), here in the shapes of its use the other fixtures lack:
//   accum2_1F1B  gradient accumulation: pp 3, 3 microbatches, schedule.step() run twice in each
//                profiled step before the optimizer step. Each iteration runs microbatches 0..2
//                again: the job is 3 microbatches run twice, not 6.
//   eval_1F1B    schedule.eval (forwards only, no autograd links between the ops): pp 3,
//                4 microbatches, a pipeline of forwards, not a trace without one.
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

const std::filesystem::path kFixtures =
    std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "torch";
constexpr int kStages = 3;
constexpr int kMicrobatches = 3;
constexpr int kIterations = 2;

Timeline load_job(const char* folder = "accum2_1F1B") {
  const std::vector<std::filesystem::path> paths = {kFixtures / folder};
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

TEST(TorchForwardOnly, EvalIsAPipelineOfForwards) {
  const Timeline t = load_job("eval_1F1B");
  constexpr int kEvalMicrobatches = 4;
  const std::map<int, std::vector<std::string>> orders = importer::torch_action_orders(t);
  ASSERT_EQ(orders.size(), static_cast<size_t>(kStages));
  for (const auto& [rank, actions] : orders) {
    std::vector<std::string> forwards;
    for (const std::string& a : actions) {
      if (a.find('F') != std::string::npos || a.find('B') != std::string::npos)
        forwards.push_back(a);
    }
    std::vector<std::string> expected;
    for (int m = 0; m < kEvalMicrobatches; ++m)
      expected.push_back(std::to_string(rank) + "F" + std::to_string(m));
    EXPECT_EQ(forwards, expected) << "rank " << rank;
  }
  EXPECT_EQ(t.run.microbatches, kEvalMicrobatches);

  const TimelineAnalysis a = analyze(t);
  ASSERT_EQ(a.devices.size(), static_cast<size_t>(kStages));
  for (const DeviceAnalysis& d : a.devices) {
    ASSERT_EQ(d.stage_phases.size(), 1u) << d.name;
    EXPECT_EQ(d.stage_phases[0].stage, d.rank) << d.name;
    EXPECT_EQ(d.stage_phases[0].phase, Phase::kForward) << d.name;
    EXPECT_EQ(d.stage_phases[0].microbatches, kEvalMicrobatches) << d.name;
    EXPECT_GT(d.stage_phases[0].compute_ns, 0) << d.name;
  }
  // Each activation sent down the pipeline is paired with its receive on the next rank.
  size_t sends = 0, paired = 0;
  for (const Span& s : t.spans) sends += t.span_name(s) == "c10d::send";
  for (const Flow& f : t.flows) {
    const Span& from = t.spans[f.from];
    const Span& to = t.spans[f.to];
    if (t.devices[from.device].rank + 1 != t.devices[to.device].rank) continue;
    EXPECT_EQ(from.microbatch, to.microbatch);
    ++paired;
  }
  EXPECT_EQ(sends, static_cast<size_t>((kStages - 1) * kEvalMicrobatches));
  EXPECT_EQ(paired, sends);
}

}  // namespace
}  // namespace meshscope::traces
