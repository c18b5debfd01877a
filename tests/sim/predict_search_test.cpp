// predict --search: skipping the engine for configurations over memory changes nothing. The same
// search, run with every configuration simulated and with those over memory skipped, ranks the
// same configurations with the same figures and reports the same counts and smallest peak. And it
// offers only the meshes the config's stack runs.
#include <gtest/gtest.h>

#include "sim/predict/config.h"
#include "sim/predict/search.h"
#include "sim/schedule/families.h"

#include <set>
#include <string>

namespace meshscope::predict {
namespace {

// A GPT-13B-like model on 32 A100s: some meshes fit 80 GB, many do not (small tp x pp, or the
// activations GPipe keeps).
PredictConfig gpt_13b() {
  return parse_config(nlohmann::json::parse(R"({
      "model": {"kind": "gpt", "layers": 40, "hidden": 5120, "heads": 40, "seq": 2048,
                "vocab": 51200},
      "mesh": {"dp": 32, "tp": 1, "pp": 1},
      "batch": {"global": 256, "micro": 1},
      "schedule": "1f1b",
      "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
      "options": {"recompute": "none", "sequence_parallel": true, "precision": "bf16",
                  "zero": 1}})"),
                      "gpt13b.json");
}

TEST(PredictSearch, SkippingTheEngineOverMemoryChangesNoResult) {
  SearchOptions all;
  all.gpus = 32;
  all.skip_engine_over_memory = false;
  SearchOptions skip = all;
  skip.skip_engine_over_memory = true;
  SearchReport all_report, skip_report;
  const std::vector<Candidate> want = search(gpt_13b(), all, {}, &all_report);
  const std::vector<Candidate> got = search(gpt_13b(), skip, {}, &skip_report);
  // Both kinds present, or the comparison would prove little.
  EXPECT_GT(want.size(), 3u);
  EXPECT_GT(all_report.over_memory, 3u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].label, want[i].label) << i;
    EXPECT_EQ(got[i].summary.step_time_s, want[i].summary.step_time_s) << want[i].label;
    EXPECT_EQ(got[i].summary.mfu, want[i].summary.mfu) << want[i].label;
    EXPECT_EQ(got[i].summary.bubble_fraction, want[i].summary.bubble_fraction) << want[i].label;
    EXPECT_EQ(got[i].summary.peak_memory_bytes, want[i].summary.peak_memory_bytes) << want[i].label;
  }
  EXPECT_EQ(skip_report.candidates, all_report.candidates);
  EXPECT_EQ(skip_report.unsuitable, all_report.unsuitable);
  EXPECT_EQ(skip_report.over_memory, all_report.over_memory);
  EXPECT_EQ(skip_report.least_memory_bytes, all_report.least_memory_bytes);
}

TEST(PredictSearch, OffersOnlyTheMeshesTheStackRuns) {
  // Of the 32 GPUs' meshes, a stack that parallelizes by FSDP alone (llm-foundry's "lacks") is
  // offered only dp 32; the default stack splits layers and the model too.
  PredictConfig base = gpt_13b();
  SearchOptions o;
  o.gpus = 32;
  const std::vector<PredictConfig> every = search_space(base, o);
  bool split = false;
  for (const PredictConfig& c : every) split = split || c.mesh.tp > 1 || c.mesh.pp > 1;
  EXPECT_TRUE(split);
  base.framework = "llm-foundry";
  const std::vector<PredictConfig> fsdp = search_space(base, o);
  ASSERT_FALSE(fsdp.empty());
  for (const PredictConfig& c : fsdp) {
    EXPECT_EQ(c.mesh.tp, 1);
    EXPECT_EQ(c.mesh.pp, 1);
    EXPECT_EQ(c.mesh.dp, 32);
  }
}

// The schedules too: Megatron-LM (megatron-core-2024, the default stack) runs 1F1B and interleaved
// 1F1B, DeepSpeed 1F1B (their profiles' "schedules"); --search had proposed ZB-H1 and ZB-V to
// them. torchtitan's profile names none: every family the search tries.
TEST(PredictSearch, OffersOnlyTheSchedulesTheStackRuns) {
  PredictConfig base = gpt_13b();
  SearchOptions o;
  o.gpus = 32;
  const auto families = [&](const std::string& framework) {
    base.framework = framework;
    base.zero = framework == "torchtitan" ? 3 : 1;  // a stage each stack runs
    std::set<std::string> out;
    for (const PredictConfig& c : search_space(base, o))
      if (c.mesh.pp > 1) out.insert(std::string(schedule::name(c.schedule)));
    return out;
  };
  EXPECT_EQ(families("megatron-core-2024"), (std::set<std::string>{"1f1b", "interleaved"}));
  EXPECT_EQ(families("deepspeed-megatron"), (std::set<std::string>{"1f1b"}));
  std::set<std::string> searchable;  // every family --search tries
  for (size_t f = 0; f < schedule::kFamilies.size(); ++f) {
    const auto family = static_cast<schedule::Family>(f);
    if (schedule::info(family).searchable && !schedule::info(family).pp_one_only)
      searchable.insert(std::string(schedule::name(family)));
  }
  EXPECT_GT(searchable.size(), 2u);
  EXPECT_EQ(families("torchtitan"), searchable);
}

TEST(PredictSearch, MeshesWithoutAPipelineRunTheConfigsOwnFamilyWithoutOne) {
  // pp = 1 runs one step whatever the family: a dp config's candidates say dp (they had said
  // 1f1b), a pipelined config's say 1f1b, and those with pp > 1 every searchable family.
  PredictConfig base = gpt_13b();
  SearchOptions o;
  o.gpus = 32;
  for (const auto family : {schedule::Family::kDataParallel, schedule::Family::kOneFOneB}) {
    base.schedule = family;
    bool pipelined = false;
    for (const PredictConfig& c : search_space(base, o)) {
      if (c.mesh.pp == 1) {
        EXPECT_EQ(c.schedule, family) << mesh::to_string(c.mesh);
      } else {
        pipelined = pipelined || c.schedule == schedule::Family::kInterleaved;
      }
    }
    EXPECT_TRUE(pipelined);
  }
}

}  // namespace
}  // namespace meshscope::predict
