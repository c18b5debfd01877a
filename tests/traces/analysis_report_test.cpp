#include "traces/analysis_report.h"

#include <gtest/gtest.h>

#include "tests/traces/trace_fixtures.h"

namespace meshscope::traces {
namespace {

TEST(AnalysisReport, JsonCarriesEveryDocumentedKeyWithTheAnalysedValues) {
  Timeline t = testing::gpipe(2, 4, 1000, 2000);
  t.counters.push_back({1, std::string(kActivationBytesCounter), {{0, 12}, {5, 3 << 20}}});
  const TimelineAnalysis a = analyze(t);
  const nlohmann::json j = to_json(a);
  EXPECT_EQ(j.at("version"), kAnalysisJsonVersion);
  EXPECT_EQ(j.at("step_time_ns"), 5 * 3000);
  EXPECT_EQ(j.at("windows").at(0).at("duration_ns"), 15000);
  EXPECT_DOUBLE_EQ(j.at("overall").at("bubble_fraction").get<double>(), 1.0 / 5.0);
  EXPECT_EQ(j.at("overall").at("idle_ns"), a.idle_ns);
  ASSERT_EQ(j.at("devices").size(), 2u);
  const auto& d1 = j.at("devices").at(1);
  for (const char* key : {"device", "rank", "name", "dp", "pp", "tp", "window_ns", "busy_ns",
                          "compute_ns", "communication_ns", "overlap_ns", "idle_ns",
                          "bubble_fraction", "peak_activation_bytes", "bubbles"}) {
    EXPECT_TRUE(d1.contains(key)) << key;
  }
  EXPECT_EQ(d1.at("pp"), 1);
  EXPECT_EQ(d1.at("idle_ns"), 3000);
  EXPECT_EQ(d1.at("peak_activation_bytes"), 3 << 20);
  EXPECT_TRUE(j.at("devices").at(0).at("peak_activation_bytes").is_null());
  EXPECT_EQ(d1.at("bubbles").at("warmup_ns"), 1000);
  EXPECT_EQ(d1.at("bubbles").at("cooldown_ns"), 2000);
  EXPECT_TRUE(j.at("has_stage_annotations").get<bool>());
  ASSERT_EQ(j.at("hta").size(), 2u);
  EXPECT_EQ(j.at("hta").at(0).at("span_ns"), a.hta[0].span_ns);
  EXPECT_EQ(j.at("hta").at(0).at("other_idle_ns"), a.hta[0].other_idle_ns);
}

TEST(AnalysisReport, TableListsDevicesAndTheOverallBubbleFraction) {
  const std::string table = format_table(analyze(testing::gpipe(2, 4, 1000, 2000)));
  EXPECT_NE(table.find("overall bubble fraction: 20.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("rank 0"), std::string::npos);
  EXPECT_NE(table.find("rank 1"), std::string::npos);
  EXPECT_NE(table.find("warm-up"), std::string::npos);  // attribution shown for annotated runs
}

// A trace without step markers has one window over its device activity: its idle share is no
// pipeline's bubble, and the table and the JSON say so.
TEST(AnalysisReport, ATraceWithoutStepsSaysItsWindowIsTheWholeTrace) {
  Timeline stepped = testing::gpipe(2, 4, 1000, 2000);
  ASSERT_FALSE(stepped.steps.empty());
  Timeline whole = stepped;
  whole.steps.clear();
  const std::string with = format_table(analyze(stepped));
  const std::string without = format_table(analyze(whole));
  EXPECT_NE(with.find("steps: 1   step time:"), std::string::npos) << with;
  // The HTA-style table spans the device activity, a cpu run's rank threads' too: not "GPU".
  EXPECT_NE(with.find("HTA-style breakdown (span = first to last device activity"),
            std::string::npos)
      << with;
  EXPECT_EQ(with.find("no step markers"), std::string::npos) << with;
  EXPECT_NE(without.find("no step markers (ProfilerStep#N ranges, or meshscope's steps): one "
                         "window, from the first to the last device activity"),
            std::string::npos)
      << without;
  EXPECT_NE(without.find("  idle %  "), std::string::npos) << without;
  EXPECT_EQ(without.find("bubble  peak act"), std::string::npos) << without;
  EXPECT_EQ(without.find("bubble fraction"), std::string::npos) << without;
  EXPECT_TRUE(to_json(analyze(stepped)).at("from_steps").get<bool>());
  EXPECT_FALSE(to_json(analyze(whole)).at("from_steps").get<bool>());
}

}  // namespace
}  // namespace meshscope::traces
