// What a catalog entry's or a framework profile's `sources` say of each figure
// (sim/cost/sources.h): the part of a line about it, and that every figure a shipped profile or
// hardware entry sets has one.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/cost/sources.h"

namespace meshscope::cost {
namespace {

// The part of a source line about the figure, with what qualifies it, and not its neighbours'.
TEST(CostSources, TheSourceIsThePartOfTheLineAboutTheFigure) {
  const Hardware a100 = find_hardware("a100-80gb");
  const auto& src = a100.sources;
  const std::string memory = source_clause(src, "efficiency.memory");
  EXPECT_EQ(memory.rfind("efficiency.memory 0.873: Triton", 0), 0u) << memory;
  EXPECT_NE(memory.find("thread 339083"), std::string::npos) << memory;  // past its "; "
  EXPECT_EQ(memory.find("assum"), std::string::npos) << memory;
  // One line, two tiers' figures: the clause about each.
  const std::string nvlink_eff = source_clause(src, "intra_node.collective_efficiency");
  EXPECT_NE(nvlink_eff.find("235 GB/s"), std::string::npos) << nvlink_eff;
  EXPECT_EQ(nvlink_eff.find("assum"), std::string::npos) << nvlink_eff;
  const std::string ib_eff = source_clause(src, "inter_node.collective_efficiency");
  EXPECT_NE(ib_eff.find("192 GB/s"), std::string::npos) << ib_eff;
  EXPECT_EQ(ib_eff.find("assum"), std::string::npos) << ib_eff;
  EXPECT_EQ(source_clause(src, "inter_node.bandwidth_bytes_per_s").find("0.96"), std::string::npos);
  EXPECT_EQ(source_clause(src, "intra_node.bandwidth_bytes_per_s").rfind("intra_node: NVLink 3", 0),
            0u);
  EXPECT_EQ(source_clause(src, "inter_node.latency_ns").rfind("latency_ns: NCCL", 0), 0u);
  // A clause after "; " that qualifies the value stays with it.
  EXPECT_NE(source_clause(src, "efficiency.attention_flash2").find("is an assumption"),
            std::string::npos);
  // Two figures on one line: each gets its own part.
  const Hardware h100 = find_hardware("h100-sxm");
  const std::string fa2 = source_clause(h100.sources, "efficiency.attention_flash2");
  const std::string fa3 = source_clause(h100.sources, "efficiency.attention_flash3");
  EXPECT_EQ(fa2.rfind("efficiency.attention_flash2 0.289", 0), 0u) << fa2;
  EXPECT_NE(fa2.find("286.2"), std::string::npos) << fa2;
  EXPECT_EQ(fa2.find("556.4"), std::string::npos) << fa2;
  EXPECT_EQ(fa3.rfind("efficiency.attention_flash3 0.562", 0), 0u) << fa3;
  EXPECT_NE(fa3.find("556.4"), std::string::npos) << fa3;
  // A word in prose ("the attention rates") is not a figure's name.
  EXPECT_EQ(source_clause({"efficiency.sustained 0.9: gemm_max and the attention rates"},
                          "efficiency.attention"),
            "");
}

// Every profile in the source tree is one the program finds: each is copied beside the build by
// sim/cost/CMakeLists.txt's list, which a new file must join.
TEST(CostSources, EveryProfileInTheSourceTreeIsShipped) {
  const std::vector<std::string> shipped = list_frameworks();
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MESHSCOPE_SOURCE_DIR) +
                                                               "/sim/cost/frameworks")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string name = entry.path().stem().string();
    EXPECT_NE(std::find(shipped.begin(), shipped.end(), name), shipped.end())
        << name << ".json is not in MESHSCOPE_FRAMEWORK_FILES (sim/cost/CMakeLists.txt)";
  }
  EXPECT_EQ(files, shipped.size());
}

// Every key a shipped profile sets (its figures and its choices: the attention kernel, the
// overlap, the recomputation modes) is named by a line of its sources: a profile's figures carry
// their provenance as the catalog's do.
TEST(CostSources, EveryKeyAShippedProfileSetsNamesItsSource) {
  for (const std::string& name : list_frameworks()) {
    std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/frameworks/" + name + ".json");
    const Framework fw = find_framework(name);
    for (const auto& [key, value] : file_figures(nlohmann::json::parse(in)))
      EXPECT_FALSE(source_clause(fw.sources, key).empty()) << name << ": " << key;
  }
}

// Every figure a shipped hardware entry sets, not only those `predict --sensitivity` moves (its
// SMs, its node's GPUs and NICs, its links' names), is named by a line of its sources: what
// `meshscope catalog NAME` shows beside each.
TEST(CostSources, EveryFigureAShippedEntrySetsNamesItsSource) {
  const std::string dir = std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog";
  const std::vector<std::string> shipped = list_json_in({dir});
  EXPECT_GE(shipped.size(), 5u);
  for (const std::string& name : shipped) {
    std::ifstream in(dir + "/" + name + ".json");
    const nlohmann::json file = nlohmann::json::parse(in);
    const std::vector<std::pair<std::string, nlohmann::json>> figures = file_figures(file);
    EXPECT_GT(figures.size(), 10u) << name;
    const Hardware hw = find_hardware(name);
    for (const auto& [key, value] : figures)
      EXPECT_FALSE(source_clause(hw.sources, key).empty()) << name << ": " << key;
  }
}

// What counts as a figure: every value one object down, none of the file's labels.
TEST(CostSources, AFilesFiguresAreItsValuesOneObjectDownWithoutItsLabels) {
  const nlohmann::json file = nlohmann::json::parse(R"({"name": "x", "description": "d",
      "kind": "gpu", "sources": [], "residuals": {"h100-sxm": {"rows": 2}},
      "memory_bytes": 1, "efficiency": {"gemm_max": 0.8, "k_half": 128},
      "tp_comm_overlap": {"qkv_fprop": {"method": "bulk"}}})");
  const auto figures = file_figures(file);
  ASSERT_EQ(figures.size(), 4u);
  EXPECT_EQ(figures[0].first, "efficiency.gemm_max");
  EXPECT_EQ(figures[1].first, "efficiency.k_half");
  EXPECT_EQ(figures[2].first, "memory_bytes");
  EXPECT_EQ(figures[3].first, "tp_comm_overlap.qkv_fprop");
  EXPECT_EQ(figures[3].second["method"], "bulk");
}

}  // namespace
}  // namespace meshscope::cost
