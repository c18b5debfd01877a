// What would let a configuration that does not fit memory fit (predict::fit_alternatives): each
// alternative it offers fits and is what simulating the config with those options gives, the
// fastest comes first, and when nothing fits it says what needs the least memory.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/predict/config.h"
#include "sim/predict/fit_alternatives.h"
#include "sim/predict/simulate.h"
#include "tests/sim/predict_profile_fixture.h"

namespace meshscope::predict {
namespace {

// A 6.6B-parameter GPT at 8,192 tokens, micro 8, on 8 A100s under torchtitan's profile (it offers
// no recomputation, its per-op selective one and full, and runs ZeRO 0 or 3: DDP or FSDP2): its
// activations alone are far beyond 80 GB without recomputation, and its replicated states (16
// bytes a parameter, 105 GB) beyond 80 GB whatever it recomputes.
nlohmann::json too_big(int micro) {
  return {{"model",
           {{"kind", "gpt"},
            {"layers", 32},
            {"hidden", 4096},
            {"heads", 32},
            {"ffn", 16384},
            {"seq", 8192},
            {"vocab", 32000}}},
          {"mesh", {{"dp", 8}, {"tp", 1}, {"pp", 1}}},
          {"batch", {{"global", 8 * micro}, {"micro", micro}}},
          {"framework", "torchtitan"},
          {"schedule", "dp"},
          {"cluster", {{"gpu", "a100-80gb"}}},
          {"options", {{"recompute", "none"}, {"zero", 0}}}};
}

// The config with an alternative's options applied, as a user would write them.
PredictConfig with(const PredictConfig& c, const FitAlternative& a) {
  PredictConfig out = c;
  for (const auto& [key, value] : a.changes) {
    if (key == "options.recompute")
      out.recompute = *model::parse_recompute(value.substr(1, value.size() - 2));
    else if (key == "options.recompute_every")
      out.recompute_every = std::stoi(value);
    else if (key == "options.zero")
      out.zero = std::stoi(value);
    else
      ADD_FAILURE() << "unexpected change " << key;
  }
  return out;
}

TEST(PredictFitAlternatives, EachOneOfferedFitsAndIsWhatItsOptionsSimulateTo) {
  const PredictConfig c = parse_config(too_big(8), "cfg.json");
  SimulateOptions o;
  o.build_timeline = false;
  const Summary base = simulate(c, o).summary;
  ASSERT_FALSE(base.fits);
  const FitAlternatives f = fit_alternatives(c, o);
  // none, op-selective, full, full every 2nd and 4th layer, by ZeRO 0 and 3 (torchtitan runs no
  // other: zero_stages): all but the config's.
  EXPECT_EQ(f.tried, 9);
  ASSERT_FALSE(f.fitting.empty());
  double previous = 0;
  for (const FitAlternative& a : f.fitting) {
    SCOPED_TRACE(describe(a));
    EXPECT_FALSE(a.changes.empty());
    for (const auto& [key, value] : a.changes) {
      if (key == "options.zero") {
        EXPECT_EQ(value, "3");
      }
    }
    EXPECT_TRUE(a.summary.fits);
    EXPECT_LE(a.summary.peak_memory_bytes, a.summary.memory_capacity_bytes);
    EXPECT_GE(a.summary.step_time_s, previous);  // fastest first
    previous = a.summary.step_time_s;
    const Summary again = simulate(with(c, a), o).summary;
    EXPECT_DOUBLE_EQ(again.step_time_s, a.summary.step_time_s);
    EXPECT_EQ(again.peak_memory_bytes, a.summary.peak_memory_bytes);
  }
  // Full recomputation with the states sharded is what makes it fit; it costs time.
  EXPECT_EQ(describe(f.fitting.front()), "options.recompute \"full\", options.zero 3");
  EXPECT_GT(f.fitting.front().summary.step_time_s, base.step_time_s);
  const std::string text = format_fit_alternatives(f, base);
  EXPECT_NE(text.find("what would fit"), std::string::npos) << text;
  EXPECT_NE(text.find("options.recompute \"full\", options.zero 3"), std::string::npos) << text;
  const nlohmann::json j = to_json(f);
  ASSERT_EQ(j.size(), f.fitting.size());
  EXPECT_EQ(j[0]["options"], (nlohmann::json{{"recompute", "full"}, {"zero", 3}}));
  EXPECT_DOUBLE_EQ(j[0]["step_time_s"].get<double>(), f.fitting.front().summary.step_time_s);
}

TEST(PredictFitAlternatives, WhenNothingFitsItNamesWhatNeedsTheLeastMemory) {
  const PredictConfig c = parse_config(too_big(64), "cfg.json");
  SimulateOptions o;
  o.build_timeline = false;
  const Summary base = simulate(c, o).summary;
  ASSERT_FALSE(base.fits);
  const FitAlternatives f = fit_alternatives(c, o);
  EXPECT_TRUE(f.fitting.empty());
  EXPECT_EQ(f.tried, 9);
  EXPECT_TRUE(f.zero_varied);
  // Full recomputation of every layer with every state sharded holds the least.
  EXPECT_EQ(describe(f.least_memory), "options.recompute \"full\", options.zero 3");
  EXPECT_LT(f.least_memory.summary.peak_memory_bytes, base.peak_memory_bytes);
  EXPECT_GT(f.least_memory.summary.peak_memory_bytes, f.least_memory.summary.memory_capacity_bytes);
  const std::string text = format_fit_alternatives(f, base);
  EXPECT_NE(text.find("no combination of options.recompute and options.zero fits (9 tried)"),
            std::string::npos)
      << text;
  EXPECT_TRUE(to_json(f).empty());
}

// A stack that runs no ZeRO stage but 0 (megatron-2022's zero_stages) is offered recomputation
// alone, and says so: no stage it cannot run is tried, none is named.
TEST(PredictFitAlternatives, AStackWithoutZeroIsOfferedRecomputationAlone) {
  nlohmann::json j = too_big(8);
  j["framework"] = "megatron-2022";
  const PredictConfig c = parse_config(j, "cfg.json");
  SimulateOptions o;
  o.build_timeline = false;
  const FitAlternatives f = fit_alternatives(c, o);
  EXPECT_FALSE(f.zero_varied);
  EXPECT_EQ(f.tried, 4);  // selective, full, full of every 2nd and 4th layer: stage 0 each
  for (const FitAlternative& a : f.fitting)
    for (const auto& [key, value] : a.changes) EXPECT_NE(key, "options.zero") << describe(a);
  EXPECT_EQ(describe(f.least_memory).find("options.zero"), std::string::npos);
}

TEST(PredictFitAlternatives, AChangeThatChangesNothingIsShownOnce) {
  // Under flash attention, Megatron-LM's selective recomputation keeps what no recomputation
  // keeps and runs nothing again (no scores are stored; its ParallelAttention leaves the flash
  // kernel outside the checkpoint, unlike megatron-core's, item 38): its profile offers it, and it
  // must not appear beside ZeRO 2 alone. 64 layers at 2,048 tokens, micro 1: the gradients ZeRO 2
  // shards are what keeps it from fitting (megatron-2022's figures with every ZeRO stage: its own
  // stack runs none but 0).
  nlohmann::json j = too_big(1);
  j["model"]["layers"] = 64;
  j["model"]["seq"] = 2048;
  j["framework"] = testing::with_every_zero_stage("megatron-2022");
  j["options"]["flash_attention"] = true;
  const PredictConfig c = parse_config(j, "cfg.json");
  SimulateOptions o;
  o.build_timeline = false;
  ASSERT_FALSE(simulate(c, o).summary.fits);
  const FitAlternatives f = fit_alternatives(c, o);
  ASSERT_FALSE(f.fitting.empty());
  EXPECT_EQ(describe(f.fitting.front()), "options.zero 2");
  for (size_t i = 0; i < f.fitting.size(); ++i)
    for (size_t k = i + 1; k < f.fitting.size(); ++k)
      EXPECT_FALSE(f.fitting[i].summary.step_time_s == f.fitting[k].summary.step_time_s &&
                   f.fitting[i].summary.peak_memory_bytes == f.fitting[k].summary.peak_memory_bytes)
          << describe(f.fitting[i]) << " and " << describe(f.fitting[k]);
  for (const FitAlternative& a : f.fitting)
    EXPECT_EQ(describe(a).find("\"selective\""), std::string::npos) << describe(a);
}

}  // namespace
}  // namespace meshscope::predict
