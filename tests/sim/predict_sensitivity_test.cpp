// `predict --sensitivity`: each figure of a hardware entry moved alone, and the source each rests
// on (sim/predict/sensitivity.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/calibration.h"
#include "sim/cost/hardware.h"
#include "sim/cost/sources.h"
#include "sim/predict/config.h"
#include "sim/predict/sensitivity.h"
#include "sim/predict/simulate.h"
#include "tests/remove_at_exit.h"

namespace meshscope::predict {
namespace {

PredictConfig shipped(const std::string& file) {
  const std::string path = std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/" + file;
  return parse_config(load_json_file(path), path);
}

nlohmann::json catalog_file(const std::string& name) {
  std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/" + name + ".json");
  return nlohmann::json::parse(in);
}

const FigureSensitivity& row(const Sensitivity& s, const std::string& figure) {
  for (const FigureSensitivity& f : s.figures)
    if (f.figure == figure) return f;
  ADD_FAILURE() << figure << " not varied";
  static const FigureSensitivity none;
  return none;
}

double step_with(const PredictConfig& c, const nlohmann::json& entry) {
  PredictConfig changed = c;
  changed.hardware = {
      c.gpu, std::make_shared<const cost::Hardware>(cost::parse_hardware(entry, "changed.json"))};
  return simulate(changed, {.build_timeline = false}).summary.step_time_s;
}

// A GEMM-bound run (Megatron, TP 8 on one node): its GEMM ceiling leads the table, and each row is
// the step of an entry with that one figure changed, as a user would get by editing the file.
TEST(PredictSensitivity, EachRowIsTheStepWithThatOneFigureChangedInTheEntry) {
  const PredictConfig c = shipped("korthikanti-22b.json");
  const Sensitivity s = sensitivity(c, 0.1);
  EXPECT_EQ(s.hardware, "a100-80gb");
  EXPECT_DOUBLE_EQ(s.step_time_s, simulate(c, {.build_timeline = false}).summary.step_time_s);
  ASSERT_FALSE(s.figures.empty());
  EXPECT_EQ(s.figures.front().figure, "efficiency.gemm_max");
  for (size_t i = 1; i < s.figures.size(); ++i)
    EXPECT_GE(s.figures[i - 1].largest_change(s.step_time_s),
              s.figures[i].largest_change(s.step_time_s));

  const FigureSensitivity& gemm = row(s, "efficiency.gemm_max");
  EXPECT_GT(gemm.step_time_s_at_low_value, s.step_time_s);
  EXPECT_LT(gemm.step_time_s_at_high_value, s.step_time_s);
  nlohmann::json entry = catalog_file("a100-80gb");
  entry["efficiency"]["gemm_max"] = 0.865 * 1.1;
  EXPECT_DOUBLE_EQ(gemm.step_time_s_at_high_value, step_with(c, entry));

  // NVLink carries this run's tensor-parallel collectives: a slower link, a longer step.
  const FigureSensitivity& nvlink = row(s, "intra_node.bandwidth_bytes_per_s");
  EXPECT_GT(nvlink.step_time_s_at_low_value, s.step_time_s);
  entry = catalog_file("a100-80gb");
  entry["intra_node"]["bandwidth_bytes_per_s"] = 300e9 * 0.9;
  EXPECT_DOUBLE_EQ(nvlink.step_time_s_at_low_value, step_with(c, entry));

  // A fraction of a peak is raised no further than 1.
  const FigureSensitivity& sustained = row(s, "efficiency.sustained");
  EXPECT_DOUBLE_EQ(sustained.high_value, 1.0);
  EXPECT_DOUBLE_EQ(sustained.low_value, 0.97 * 0.9);
}

// The profile's numbers too: each row is the step with a profile file that has that one number
// changed, as a user would get by copying the profile and naming the copy in the config.
TEST(PredictSensitivity, EachProfileRowIsTheStepWithThatNumberChangedInTheProfile) {
  PredictConfig c = shipped("torchtitan-llama2-13b-64xa100.json");
  const Sensitivity s = sensitivity(c, 0.1);
  EXPECT_EQ(s.framework, "torchtitan");
  const FigureSensitivity* norm = nullptr;
  for (const FigureSensitivity& f : s.profile_figures)
    if (f.figure == "elementwise_passes.norm") norm = &f;
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(norm->value, 18);  // torchtitan's eager RMSNorm
  EXPECT_NE(norm->source.find("eager RMSNorm"), std::string::npos) << norm->source;
  // More passes, a longer step.
  EXPECT_LT(norm->step_time_s_at_low_value, s.step_time_s);
  EXPECT_GT(norm->step_time_s_at_high_value, s.step_time_s);

  std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/frameworks/torchtitan.json");
  nlohmann::json profile = nlohmann::json::parse(in);
  profile["elementwise_passes"]["norm"] = 18 * 1.1;
  const std::string copy = meshscope::testing::process_temp_path("torchtitan-norm.json").string();
  std::ofstream(copy) << profile.dump();
  c.framework = copy;
  EXPECT_DOUBLE_EQ(norm->step_time_s_at_high_value,
                   simulate(c, {.build_timeline = false}).summary.step_time_s);
  std::remove(copy.c_str());

  // The profile's choices are not numbers, and a speedup of 1 is "one rate for both".
  for (const FigureSensitivity& f : s.profile_figures)
    EXPECT_NE(f.figure, "attention_forward_speedup");
  // A gradient count the profile states is a number too; one it leaves to the rule is not.
  const auto named = [](const Sensitivity& in, const std::string& key) {
    return std::any_of(in.profile_figures.begin(), in.profile_figures.end(),
                       [&](const FigureSensitivity& f) { return f.figure == key; });
  };
  EXPECT_TRUE(named(s, "elementwise_backward_passes.norm"));
  EXPECT_FALSE(
      named(sensitivity(shipped("korthikanti-22b.json"), 0.1), "elementwise_backward_passes.norm"));
}

// What a run does not use, or what its config states itself, moves nothing.
TEST(PredictSensitivity, FiguresTheRunDoesNotUseMoveNothing) {
  const PredictConfig c = shipped("fmsfsdp-llama2-7b-hsdp-128xa100.json");
  const Sensitivity s = sensitivity(c, 0.2);
  // No convolutions in a GPT.
  EXPECT_DOUBLE_EQ(row(s, "efficiency.conv").step_time_s_at_low_value, s.step_time_s);
  EXPECT_DOUBLE_EQ(row(s, "efficiency.conv").step_time_s_at_high_value, s.step_time_s);
  // The config gives its network (cluster.network_gbps 400), which replaces the catalog's.
  EXPECT_DOUBLE_EQ(row(s, "inter_node.bandwidth_bytes_per_s").step_time_s_at_low_value,
                   s.step_time_s);
  // Its kernel is FlashAttention-2: the entry's rate for it matters, the fallback does not.
  EXPECT_DOUBLE_EQ(row(s, "efficiency.attention").step_time_s_at_low_value, s.step_time_s);
  EXPECT_GT(row(s, "efficiency.attention_flash2").step_time_s_at_low_value, s.step_time_s);
  // NeMo's GPT-3 recipe states its bf16 gradient reduction (options.grad_reduce_dtype): the
  // profile's fp32 default is shown as the profile states it and moves nothing.
  const Sensitivity gpt3 = sensitivity(shipped("nemo-gpt3-175b-128xh100.json"), 0.2);
  const auto reduce =
      std::find_if(gpt3.profile_figures.begin(), gpt3.profile_figures.end(),
                   [](const FigureSensitivity& f) { return f.figure == "grad_reduce_bytes.bf16"; });
  ASSERT_NE(reduce, gpt3.profile_figures.end());
  EXPECT_DOUBLE_EQ(reduce->value, 4);
  EXPECT_DOUBLE_EQ(reduce->step_time_s_at_low_value, gpt3.step_time_s);
  EXPECT_DOUBLE_EQ(reduce->step_time_s_at_high_value, gpt3.step_time_s);
}

// Every figure the sensitivity moves that a shipped entry sets has a line of the entry's sources
// about it: the provenance a user reads beside each row.
TEST(PredictSensitivity, EveryFigureTheShippedCatalogSetsNamesItsSource) {
  const std::vector<std::string> shipped =
      cost::list_json_in({std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog"});
  EXPECT_GE(shipped.size(), 5u);
  for (const std::string& name : shipped) {
    const nlohmann::json file = catalog_file(name);
    const cost::Hardware hw = cost::find_hardware(name);
    for (const std::string& key : sensitivity_figures()) {
      std::string pointer = "/" + key;  // "efficiency.gemm_max" -> "/efficiency/gemm_max"
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      // A default of the code is not a figure of the file.
      if (!file.contains(nlohmann::json::json_pointer(pointer))) continue;
      EXPECT_FALSE(cost::source_clause(hw.sources, key).empty()) << name << ": " << key;
    }
  }
}

TEST(PredictSensitivity, RefusesWhatWouldMeanNothing) {
  const PredictConfig c = shipped("korthikanti-22b.json");
  cost::Calibration cal;
  EXPECT_THROW(sensitivity(c, 0.1, {.calibration = &cal}), std::invalid_argument);
  EXPECT_THROW(sensitivity(c, 0.0), std::invalid_argument);
  EXPECT_THROW(sensitivity(c, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::predict
