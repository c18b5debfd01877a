#include "sim/predict/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace meshscope::predict {
namespace {

using nlohmann::json;

json issue_example() {
  return json::parse(R"({"model": {"kind": "gpt", "layers": 24, "hidden": 2304, "heads": 24, "seq": 2048, "vocab": 51200},
    "mesh": {"dp": 16, "tp": 1, "pp": 1},
    "batch": {"global": 512, "micro": 1},
    "schedule": "1f1b", "virtual_stages": 1,
    "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
    "options": {"recompute": "none", "sequence_parallel": false, "precision": "bf16", "zero": 0}})");
}

std::string error_of(const json& j) {
  try {
    parse_config(j, "cfg.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(PredictConfig, ReadsTheIssuesKeys) {
  const PredictConfig c = parse_config(issue_example(), "cfg.json");
  EXPECT_EQ(c.model, ModelKind::kGpt);
  EXPECT_EQ(c.gpt.hidden, 2304);
  EXPECT_EQ(c.mesh.dp, 16);
  EXPECT_EQ(c.microbatches(), 32);
  EXPECT_EQ(c.schedule, schedule::Family::kOneFOneB);
  EXPECT_EQ(c.gpu, "a100-80gb");
  EXPECT_EQ(c.precision, cost::Precision::kBf16);
  EXPECT_EQ(c.gpus(), 16);
}

TEST(PredictConfig, BadValuesNameTheirKey) {
  json j = issue_example();
  j["mesh"]["dp"] = 0;
  EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.dp': must be an integer in [1, 2147483647]");
  // Values past an int are refused, not wrapped to negative sizes.
  j["mesh"]["dp"] = 3000000000;
  EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.dp': must be an integer in [1, 2147483647]");
  j["mesh"]["dp"] = 1e30;
  EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.dp': must be an integer in [1, 2147483647]");
  j = issue_example();
  j["mesh"] = {{"dp", 65536}, {"pp", 24}, {"tp", 24}};
  j["batch"]["global"] = 65536;
  EXPECT_NE(error_of(j).find("key 'mesh': dp x pp x tp x cp = 37748736 GPUs"), std::string::npos) << error_of(j);
  j = issue_example();
  j["model"]["hidden"] = 2147483640;
  j["model"]["seq"] = 2147483647;
  EXPECT_NE(error_of(j).find("key 'model': too large to count"), std::string::npos) << error_of(j);
  j = issue_example();
  j["cluster"]["gpu"] = "a100-40gb";
  EXPECT_NE(error_of(j).find("key 'cluster.gpu': unknown hardware 'a100-40gb'"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("MESHSCOPE_CATALOG"), std::string::npos) << error_of(j);
  j = issue_example();
  j["model"]["hiden"] = 5;
  EXPECT_EQ(error_of(j), "cfg.json: key 'model.hiden': unknown key");
  j = issue_example();
  j["batch"]["global"] = 100;
  EXPECT_NE(error_of(j).find("key 'batch.global'"), std::string::npos);
  j = issue_example();
  j["schedule"] = "2f2b";
  EXPECT_NE(error_of(j).find("key 'schedule': '2f2b' is not one of"), std::string::npos);
  j = issue_example();
  j["options"]["recompute"] = "some";
  EXPECT_NE(error_of(j).find("key 'options.recompute'"), std::string::npos);
  j = issue_example();
  j["mesh"]["tp"] = 16;
  EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.tp': model.heads (24) is not divisible by tp (16)");
  j = issue_example();
  j["mesh"]["pp"] = 32;
  j["mesh"]["dp"] = 1;
  EXPECT_NE(error_of(j).find("key 'mesh.pp': model.layers (24) fewer than"), std::string::npos);
  j = issue_example();
  j["virtual_stages"] = 2;
  EXPECT_NE(error_of(j).find("key 'virtual_stages'"), std::string::npos);
}

TEST(PredictConfig, FilesThatAreNoJsonNameThemselves) {
  const auto dir = std::filesystem::temp_directory_path() / "meshscope_config_test";
  std::filesystem::create_directories(dir);
  const auto message = [](const std::string& path) -> std::string {
    try {
      load_json_file(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(loaded)";
  };
  EXPECT_EQ(message(dir.string()), dir.string() + ": is a directory, not a JSON file");
  std::ofstream(dir / "cut.json") << R"({"model": {"kind": )";
  EXPECT_EQ(message((dir / "cut.json").string()).rfind((dir / "cut.json").string() + ": malformed JSON at byte ", 0), 0u);
  EXPECT_EQ(message((dir / "none.json").string()), (dir / "none.json").string() + ": cannot open");
  std::filesystem::remove_all(dir);
}

TEST(PredictConfig, ListsSweepTheirCartesianProduct) {
  json j = issue_example();
  j["mesh"]["dp"] = {8, 16};
  j["cluster"]["gpu"] = {"a100-80gb", "h100-sxm", "h200-sxm"};
  const auto points = expand_sweep(j, "cfg.json");
  ASSERT_EQ(points.size(), 6u);
  // The first key in document order varies slowest.
  EXPECT_EQ(points[0].swept[0].first, "cluster.gpu");
  EXPECT_EQ(points[0].config.gpu, "a100-80gb");
  EXPECT_EQ(points[1].config.mesh.dp, 16);
  EXPECT_EQ(points[5].config.gpu, "h200-sxm");
  EXPECT_EQ(points[5].swept[1].second, "16");
  EXPECT_EQ(expand_sweep(issue_example(), "cfg.json").size(), 1u);
  j["mesh"]["tp"] = json::array();
  EXPECT_THROW(expand_sweep(j, "cfg.json"), std::runtime_error);
}

TEST(PredictConfig, AnInvalidCombinationIsOnePointOfTheSweep) {
  json j = issue_example();  // 24 heads
  j["mesh"]["tp"] = {1, 16, 8};
  const auto points = expand_sweep(j, "cfg.json");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].error, "");
  EXPECT_EQ(points[1].error, "key 'mesh.tp': model.heads (24) is not divisible by tp (16)");
  EXPECT_EQ(points[2].config.mesh.tp, 8);
  // When no combination is valid, the configuration is at fault: the first point's error.
  j["mesh"]["tp"] = {16, 48};
  try {
    expand_sweep(j, "cfg.json");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cfg.json: key 'mesh.tp': model.heads (24) is not divisible by tp (16)");
  }
  // A product too large to enumerate is refused before it is.
  j = issue_example();
  const json many = json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  for (const char* key : {"layers", "hidden", "heads", "seq", "vocab"}) j["model"][key] = many;
  j["mesh"]["dp"] = many;
  EXPECT_THROW(expand_sweep(j, "cfg.json"), std::runtime_error);
}

}  // namespace
}  // namespace meshscope::predict
