#include "sim/predict/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "sim/predict/search.h"
#include "sim/predict/simulate.h"
#include "tests/sim/config_error.h"
#include "traces/host_memory.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

json issue_example() {
  return json::parse(
      R"({"model": {"kind": "gpt", "layers": 24, "hidden": 2304, "heads": 24, "seq": 2048, "vocab": 51200},
    "mesh": {"dp": 16, "tp": 1, "pp": 1},
    "batch": {"global": 512, "micro": 1},
    "schedule": "1f1b", "virtual_stages": 1,
    "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
    "options": {"recompute": "none", "sequence_parallel": false, "precision": "bf16", "zero": 0}})");
}

using testing::error_of;

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
  EXPECT_NE(error_of(j).find("key 'mesh': dp x pp x tp x cp = 37748736 GPUs"), std::string::npos)
      << error_of(j);
  j = issue_example();
  j["model"]["hidden"] = 2147483640;
  j["model"]["seq"] = 2147483647;
  EXPECT_NE(error_of(j).find("key 'model': too large to count"), std::string::npos) << error_of(j);
  j = issue_example();
  j["cluster"]["gpu"] = "a100-40gb";
  EXPECT_NE(error_of(j).find("key 'cluster.gpu': unknown hardware 'a100-40gb'"), std::string::npos)
      << error_of(j);
  EXPECT_NE(error_of(j).find("MESHSCOPE_CATALOG"), std::string::npos) << error_of(j);
  j = issue_example();
  j["model"]["layers_per_stage"] = json::array();  // was an even split without a word
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'model.layers_per_stage': is empty: give one count per stage, or leave "
            "it out for an even split");
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
  EXPECT_EQ(message(dir.string()), dir.string() + ": is a directory, not a config file");
  std::ofstream(dir / "cut.json") << R"({"model": {"kind": )";
  EXPECT_EQ(message((dir / "cut.json").string())
                .rfind((dir / "cut.json").string() + ": malformed JSON at byte ", 0),
            0u);
  EXPECT_EQ(message((dir / "none.json").string()),
            (dir / "none.json").string() + ": cannot open config file: No such file or directory");
  // A key given twice: a parser would keep one of the two without a word.
  std::ofstream(dir / "twice.json")
      << R"({"mesh": {"dp": 8}, "batch": {"micro": 1}, "mesh": {"tp": 2}})";
  EXPECT_EQ(message((dir / "twice.json").string()),
            (dir / "twice.json").string() + ": key 'mesh' given twice (bytes 1 and 43)");
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
  // A value of another kind in a list is a typo in it, not a combination that does not fit: the
  // whole configuration is refused (it was a row of errors, the command succeeding).
  j["mesh"]["tp"] = {1, "2", 4};
  try {
    expand_sweep(j, "cfg.json");
    FAIL() << "a list of numbers and a string swept";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "cfg.json: key 'mesh.tp': the list mixes numbers and strings (element 2 is "
                 "\"2\")");
  }
  j["mesh"]["tp"] = {1, 2.5};  // numbers alike: each point says what is wrong with its own
  const auto alike = expand_sweep(j, "cfg.json");
  ASSERT_EQ(alike.size(), 12u);
  EXPECT_EQ(alike[0].error, "");
  EXPECT_NE(alike[1].error.find("key 'mesh.tp'"), std::string::npos) << alike[1].error;
}

// A sweep of schedules at chunk counts of their own: virtual_stages by family, each schedule
// taking its entry or its family's default; a one-chunk family given a number of its own, or a
// name that is no family, is refused naming the key. A single number over such a sweep is an
// error for the one-chunk families, and says how to give it by family.
TEST(PredictConfig, VirtualStagesByFamilyGiveEachSweptScheduleItsOwn) {
  json j = issue_example();  // 24 layers, pp 4, 8 microbatches a replica
  j["schedule"] = {"1f1b", "interleaved", "zb-h1", "interleaved-zb"};
  j["virtual_stages"] = {{"interleaved", 3}};
  const auto points = expand_sweep(j, "cfg.json");
  ASSERT_EQ(points.size(), 4u);
  for (const auto& p : points) EXPECT_EQ(p.error, "") << p.json.dump();
  EXPECT_EQ(points[0].config.virtual_stages, 1);
  EXPECT_EQ(points[1].config.virtual_stages, 3);
  EXPECT_EQ(points[2].config.virtual_stages, 1);
  EXPECT_EQ(points[3].config.virtual_stages, 2);    // interleaved-zb's default
  j["virtual_stages"] = {{"interleaved", {2, 3}}};  // a list inside sweeps as anywhere
  EXPECT_EQ(expand_sweep(j, "cfg.json").size(), 8u);
  j["schedule"] = "1f1b";
  j["virtual_stages"] = {{"1f1b", 2}};
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'virtual_stages.1f1b': schedule '1f1b': takes one stage per pp rank; "
            "virtual stages (2) are for 'interleaved' and the other multi-chunk families");
  j["virtual_stages"] = {{"interleaved", 2}, {"1f2b", 2}};
  EXPECT_NE(error_of(j).find("cfg.json: key 'virtual_stages.1f2b': not a schedule family (one of "
                             "naive, gpipe, 1f1b, interleaved"),
            std::string::npos)
      << error_of(j);
  j["virtual_stages"] = {{"interleaved", 0}};
  EXPECT_NE(error_of(j).find("key 'virtual_stages.interleaved': must be an integer"),
            std::string::npos)
      << error_of(j);
  j["virtual_stages"] = 3;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'virtual_stages': schedule '1f1b': takes one stage per pp rank; virtual "
            "stages (3) are for 'interleaved' and the other multi-chunk families (a sweep of "
            "schedules gives each its own by family: \"virtual_stages\": {\"interleaved\": 3})");
  // The shipped example compares every pipeline family of one model so.
  const auto shipped = expand_sweep(load_json_file(std::string(MESHSCOPE_SOURCE_DIR) +
                                                   "/sim/predict/configs/schedule-sweep.json"),
                                    "schedule-sweep.json");
  ASSERT_EQ(shipped.size(), 6u);
  for (const auto& p : shipped) {
    EXPECT_EQ(p.error, "") << p.json.dump();
    const std::map<std::string, int> chunks = {{"gpipe", 1},          {"1f1b", 1},
                                               {"zb-h1", 1},          {"interleaved", 5},
                                               {"interleaved-zb", 2}, {"zb-v", 2}};
    const std::string family(schedule::name(p.config.schedule));
    EXPECT_EQ(p.config.virtual_stages, chunks.at(family)) << family;
  }
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
    EXPECT_EQ(std::string(e.what()),
              "cfg.json: key 'mesh.tp': model.heads (24) is not divisible by tp (16)");
  }
  // A product too large to enumerate is refused before it is.
  j = issue_example();
  const json many = json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  for (const char* key : {"layers", "hidden", "heads", "seq", "vocab"}) j["model"][key] = many;
  j["mesh"]["dp"] = many;
  EXPECT_THROW(expand_sweep(j, "cfg.json"), std::runtime_error);
}

// A temporary file removed at the end of the test.
struct TempFile {
  explicit TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() /
              ("meshscope_cfg_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

std::string load_error(const std::string& path) {
  try {
    load_json_file(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(loaded)";
}

std::string sweep_error(const json& j) {
  try {
    expand_sweep(j, "cfg.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(PredictConfig, NestingTwentyThousandDeepIsRefusedNotACrash) {
  // From a file: refused before parsing, with the byte and the key it is under.
  const std::string deep = R"({"model": {"kind": "gpt", "x": )" + std::string(20000, '[') +
                           std::string(20000, ']') + "}}";
  TempFile f("deep.json", deep);
  const std::string e = load_error(f.path);
  EXPECT_EQ(e, f.path + ": key 'model.x': nested deeper than 16 levels at byte 45") << e;
  // Built in memory (as the GUI or a test would): the sweep's walk stops at the same depth.
  json v = 1;
  for (int i = 0; i < 20000; ++i) {
    json outer = json::array();
    outer.push_back(std::move(v));
    v = std::move(outer);
  }
  json j = issue_example();
  j["model"]["x"] = std::move(v);
  EXPECT_EQ(sweep_error(j), "cfg.json: key 'model.x': nested deeper than 16 levels");
  // A sweep of lists of lists (layers_per_stage) is well within the bound.
  j = issue_example();
  j["mesh"]["pp"] = 2;
  j["model"]["layers_per_stage"] = json::array({json::array({12, 12}), json::array({8, 16})});
  EXPECT_EQ(expand_sweep(j, "cfg.json").size(), 2u);
}

TEST(PredictConfig, ANumberBeyondADoubleNamesTheFileAndByte) {
  TempFile f("big.json", R"({"model": {"layers": 1e999}})");
  EXPECT_EQ(load_error(f.path), f.path + ": number '1e999' out of range at byte 21");
}

TEST(PredictConfig, AConfigMustSayWhatItModels) {
  EXPECT_EQ(error_of(json::object())
                .rfind("cfg.json: key 'model': missing: a config must say what it models", 0),
            0u)
      << error_of(json::object());
  json j = issue_example();
  j.erase("model");
  EXPECT_NE(error_of(j).find("key 'model': missing"), std::string::npos);
  j["model"] = json::object();
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'model.kind': missing: one of gpt, vgg, mlp, chain, classifier, moe");
  j["model"] = {{"kind", "gpt"}};
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'model.layers': missing: transformer layers of the gpt model");
  j = issue_example();
  j["model"].erase("vocab");
  EXPECT_EQ(error_of(j), "cfg.json: key 'model.vocab': missing: the gpt model's vocabulary size");
  j["model"] = {{"kind", "mlp"}, {"layers", 4}};
  EXPECT_EQ(error_of(j), "cfg.json: key 'model.hidden': missing: the mlp model's hidden size");
}

TEST(PredictConfig, ALayerCountBeyondMemoryIsRefusedUpFront) {
  json j = issue_example();
  j["model"] = {{"kind", "gpt"}, {"layers", 2147483647}, {"hidden", 64}, {"heads", 1}, {"seq", 8},
                {"vocab", 8}};
  j["mesh"] = {{"dp", 1}};
  j["batch"] = {{"global", 1}};
  const std::string e = error_of(j);
  EXPECT_EQ(
      e.rfind("cfg.json: key 'model.layers': building 2147483647 layers would take about ", 0), 0u)
      << e;
  EXPECT_NE(e.find("TiB of memory, over half of what this process may use (" +
                   traces::memory_limit().source + ")"),
            std::string::npos)
      << e;
  j["model"] = {{"kind", "mlp"}, {"layers", 2147483647}, {"hidden", 8}};
  EXPECT_NE(error_of(j).find("key 'model.layers': building 2147483647 layers"), std::string::npos)
      << error_of(j);
  // Two billion microbatches are refused the same way, naming the batch.
  j["model"] = {{"kind", "mlp"}, {"layers", 2}, {"hidden", 8}};
  j["batch"] = {{"global", 2147483647}};
  EXPECT_NE(error_of(j).find("key 'batch.global': 2147483647 microbatches per replica"),
            std::string::npos)
      << error_of(j);
}

TEST(PredictConfig, TopKCannotExceedTheExperts) {
  json j = issue_example();
  j["model"]["experts"] = 2;
  j["model"]["top_k"] = 4;
  EXPECT_EQ(error_of(j).rfind("cfg.json: key 'model.top_k': 4 is more than model.experts (2)", 0),
            0u)
      << error_of(j);
  j["model"]["top_k"] = 2;
  EXPECT_EQ(error_of(j), "");
  j["model"].erase("experts");
  EXPECT_EQ(error_of(j), "cfg.json: key 'model.top_k': needs model.experts > 0");
  // A dense model's defaults written out (docs/CONFIG.md's table copied into a config) are taken.
  j["model"]["top_k"] = 1;
  j["model"]["expert_ffn"] = 0;
  EXPECT_EQ(error_of(j), "");
  j["model"]["expert_ffn"] = 64;
  EXPECT_EQ(error_of(j), "cfg.json: key 'model.expert_ffn': needs model.experts > 0");
}

TEST(PredictConfig, ReadsTheMoeWorkloadAndItsChecks) {
  json j = {{"model",
             {{"kind", "moe"},
              {"layers", 4},
              {"hidden", 32},
              {"experts", 8},
              {"top_k", 2},
              {"capacity_factor", 1.25}}},
            {"mesh", {{"dp", 4}, {"ep", 4}}},
            {"batch", {{"global", 64}, {"micro", 8}}},
            {"cluster", {{"gpu", "cpu-local"}}}};
  const PredictConfig c = parse_config(j, "cfg.json");
  EXPECT_EQ(c.model, ModelKind::kMoe);
  EXPECT_EQ(c.mlp_layers, 4);
  EXPECT_EQ(c.moe_experts, 8);
  EXPECT_EQ(c.moe_top_k, 2);
  EXPECT_DOUBLE_EQ(c.moe_capacity_factor, 1.25);
  EXPECT_EQ(c.ep, 4);
  auto with = [&](const char* section, const char* key, json v) {
    json k = j;
    k[section][key] = std::move(v);
    return error_of(k);
  };
  EXPECT_EQ(with("model", "top_k", 9).rfind("cfg.json: key 'model.top_k': 9 is more than", 0), 0u);
  EXPECT_EQ(with("model", "capacity_factor", 0),
            "cfg.json: key 'model.capacity_factor': must be a number in (0, model.experts]");
  EXPECT_EQ(with("model", "capacity_factor", "two"),
            "cfg.json: key 'model.capacity_factor': must be a number in (0, model.experts]");
  EXPECT_EQ(with("model", "experts", 6),
            "cfg.json: key 'mesh.ep': model.experts is not divisible by ep");
  EXPECT_EQ(
      with("mesh", "tp", 2).rfind("cfg.json: key 'mesh.tp': the moe model runs with tp = 1", 0),
      0u);
  EXPECT_EQ(
      with("mesh", "ep", 3),
      "cfg.json: key 'mesh.ep': must divide mesh.dp (experts are sharded inside the dp group)");
}

// What Megatron refuses of experts and context parallelism, refused naming the key.
TEST(PredictConfig, ExpertsUnderTpNeedSequenceParallelismAndShardsHoldWholeExpertGroups) {
  json j = {{"model",
             {{"kind", "gpt"},
              {"layers", 2},
              {"hidden", 1024},
              {"heads", 16},
              {"seq", 1024},
              {"vocab", 32000},
              {"experts", 8},
              {"top_k", 2}}},
            {"mesh", {{"dp", 4}, {"tp", 2}}},
            {"batch", {{"global", 8}, {"micro", 1}}},
            {"framework", "megatron-core-2024"}};
  EXPECT_EQ(error_of(j).rfind("cfg.json: key 'options.sequence_parallel': must be true for "
                              "model.experts with mesh.tp > 1 (Megatron-LM asserts it",
                              0),
            0u)
      << error_of(j);
  j["options"] = {{"sequence_parallel", true}};
  EXPECT_EQ(error_of(j), "");
  j["model"]["expert_ffn"] = 1001;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'mesh.tp': model.expert_ffn (1001) is not divisible by tp (2)");
  j["model"].erase("expert_ffn");
  j["mesh"] = {{"dp", 8}, {"ep", 4}};
  j["framework"] = "torchtitan";
  j["options"] = {{"zero", 3}, {"shard_group", 2}};
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.shard_group': 2 is not a multiple of mesh.ep (4): "
            "an expert's states shard over its replicas in a shard group, "
            "shard_group / ep of them");
  // Context parallelism cuts the sequence into 2 x cp chunks.
  j = {{"model",
        {{"kind", "gpt"},
         {"layers", 2},
         {"hidden", 1024},
         {"heads", 16},
         {"seq", 1029},
         {"vocab", 32000}}},
       {"mesh", {{"dp", 1}, {"cp", 3}}},
       {"batch", {{"global", 1}, {"micro", 1}}},
       {"framework", "megatron-core-2024"}};
  EXPECT_EQ(
      error_of(j).rfind("cfg.json: key 'mesh.cp': model.seq (1029) is not divisible by 2 x cp "
                        "(6)",
                        0),
      0u)
      << error_of(j);
  j["model"]["seq"] = 1032;
  EXPECT_EQ(error_of(j), "");
  // ... inside a fused attention kernel.
  j["options"] = {{"flash_attention", false}};
  EXPECT_EQ(error_of(j).rfind("cfg.json: key 'options.flash_attention': must be true with "
                              "mesh.cp > 1: context parallelism runs inside a fused attention "
                              "kernel",
                              0),
            0u)
      << error_of(j);
}

TEST(PredictConfig, KvHeadsMustDivideTheHeadsAndSaySo) {
  json j = issue_example();  // 24 heads
  j["model"]["kv_heads"] = 5;
  EXPECT_EQ(
      error_of(j).rfind(
          "cfg.json: key 'model.kv_heads': model.heads (24) is not divisible by kv_heads (5)", 0),
      0u)
      << error_of(j);
  j["model"]["kv_heads"] = 48;
  EXPECT_EQ(
      error_of(j).rfind("cfg.json: key 'model.kv_heads': 48 is more than model.heads (24)", 0), 0u)
      << error_of(j);
  j["model"]["kv_heads"] = 8;
  EXPECT_EQ(error_of(j), "");
}

TEST(PredictConfig, ClusterNodesIsAcceptedAndMustMatchTheMesh) {
  json j = issue_example();  // dp 16, 8 GPUs per node
  j["cluster"]["nodes"] = 2;
  EXPECT_EQ(parse_config(j, "cfg.json").nodes, 2);
  j["cluster"]["nodes"] = 4;
  EXPECT_EQ(
      error_of(j),
      "cfg.json: key 'cluster.nodes': 4 nodes of 8 GPUs are 32 GPUs; the mesh (dp x pp x tp x cp) "
      "uses 16");
}

TEST(PredictConfig, AnInterleavedSplitMustDivideTheLayersAsMegatronRequires) {
  json j = issue_example();  // 24 layers, 32 microbatches per replica
  j["mesh"]["pp"] = 4;
  j["schedule"] = "interleaved";
  j["virtual_stages"] = 4;  // 16 chunks for 24 layers
  EXPECT_EQ(error_of(j).rfind(
                "cfg.json: key 'virtual_stages': model.layers (24) is not divisible by pp x "
                "virtual_stages (16)",
                0),
            0u)
      << error_of(j);
  j["virtual_stages"] = 3;  // 12 chunks of 2 layers
  EXPECT_EQ(error_of(j), "");
  // An uneven split asked for explicitly stays allowed.
  j["virtual_stages"] = 4;
  j["model"]["layers_per_stage"] = {2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(error_of(j), "");
  // A split that does not match the stages or the layers is the config's error, naming the key
  // (it was the model builder's, without one, and this test accepted a split of 25 layers).
  j["model"]["layers_per_stage"] = {2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 2};
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'model.layers_per_stage': lists 16 stages holding 25 layers; it needs "
            "pp x virtual_stages = 16 stages holding model.layers (24)");
  j["model"]["layers_per_stage"] = {12, 12};
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'model.layers_per_stage': lists 2 stages holding 24 layers; it needs "
            "pp x virtual_stages = 16 stages holding model.layers (24)");
  j["model"]["layers_per_stage"] = {4294967297LL, 1};  // 2^32 + 1 was read as 1
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'model.layers_per_stage': must be a list of integers from 0 to "
            "model.layers");
}

TEST(PredictConfig, ASweepReadsEachCatalogEntryOnce) {
  // The entry is a file that disappears after the sweep is expanded: simulating its points must
  // not read it again.
  std::ifstream src(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/a100-80gb.json");
  std::stringstream text;
  text << src.rdbuf();
  auto entry = std::make_unique<TempFile>("gpu.json", text.str());
  json j = issue_example();
  j["cluster"]["gpu"] = entry->path;
  j["mesh"]["dp"] = {8, 16};
  const auto points = expand_sweep(j, "cfg.json");
  entry.reset();
  for (const SweepPoint& p : points)
    EXPECT_GT(simulate(p.config, {.build_timeline = false}).summary.step_time_s, 0);
}

TEST(PredictConfig, EveryKeyTheParserReadsIsInTheReference) {
  std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/docs/CONFIG.md");
  ASSERT_TRUE(in) << "docs/CONFIG.md";
  std::stringstream doc;
  doc << in.rdbuf();
  const std::vector<std::string> keys = config_keys();
  EXPECT_GT(keys.size(), 35u);
  for (const std::string& k : keys)
    EXPECT_NE(doc.str().find("`" + k + "`"), std::string::npos) << k << " is not in docs/CONFIG.md";
}

TEST(PredictSearch, AnEmptySearchSaysWhy) {
  json j = issue_example();
  j["model"]["layers"] = 2;
  j["batch"] = {{"global", 6}, {"micro", 1}};
  j["mesh"] = {{"dp", 1}};
  const PredictConfig base = parse_config(j, "cfg.json");
  SearchOptions so;
  so.gpus = 64;  // tp <= 8 and pp <= 2 leave dp >= 4, and no such dp divides 6
  SearchReport report;
  EXPECT_TRUE(search(base, so, {}, &report).empty());
  EXPECT_EQ(report.candidates, 0u);
  EXPECT_EQ(why_nothing_fits(base, so, report)
                .rfind("no mesh of 64 GPUs divides batch.global (6) into microbatches", 0),
            0u)
      << why_nothing_fits(base, so, report);
  // A batch that divides, on a model too big for one device: memory is the reason.
  j = issue_example();
  j["model"]["layers"] = 96;
  j["model"]["hidden"] = 12288;
  j["model"]["heads"] = 96;
  j["mesh"] = {{"dp", 1}};
  j["batch"] = {{"global", 8}, {"micro", 1}};
  so.gpus = 1;
  const PredictConfig big = parse_config(j, "cfg.json");
  EXPECT_TRUE(search(big, so, {}, &report).empty());
  EXPECT_EQ(why_nothing_fits(big, so, report).rfind("no configuration of 1 GPUs fits memory: ", 0),
            0u)
      << why_nothing_fits(big, so, report);
}

}  // namespace
}  // namespace meshscope::predict
