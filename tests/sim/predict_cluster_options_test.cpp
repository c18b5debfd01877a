// Config keys for what published runs state about their cluster and sharding: a node's network
// bandwidth (cluster.network_gbps), hybrid sharding (options.shard_group: PyTorch FSDP's
// HYBRID_SHARD) and checkpointing every n-th layer (options.recompute_every); ZeRO-3's collectives
// issued layer by layer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/cost/collective_model.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/model/gpt.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"
#include "sim/predict/zero.h"
#include "tests/sim/config_error.h"
#include "tests/sim/predict_profile_fixture.h"
#include "tests/test_paths.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

// 16 GPUs on two 8-GPU nodes, ZeRO-3 behind collectives the framework waits for (megatron-2022's
// figures, with every ZeRO stage: its own stack runs none but 0), so that their prices show in the
// step; fp16, whose gradients megatron-2022 reduces at their own 2 bytes (its bf16 runs reduce fp32
// main gradients).
// A GPT of these layers, hidden size, heads, sequence and vocabulary, the rest at its defaults.
model::GptSpec gpt_spec(int64_t layers, int64_t hidden, int64_t heads, int64_t seq, int64_t vocab) {
  model::GptSpec g;
  g.layers = layers;
  g.hidden = hidden;
  g.heads = heads;
  g.seq = seq;
  g.vocab = vocab;
  return g;
}

json two_nodes() {
  json j = json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 2048, "heads": 16, "seq": 2048, "vocab": 32000},
          "mesh": {"dp": 16}, "batch": {"global": 16, "micro": 1}, "schedule": "dp",
          "framework": "megatron-2022",
          "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
          "options": {"zero": 3, "precision": "fp16"}})");
  j["framework"] = testing::with_every_zero_stage("megatron-2022");
  return j;
}

using testing::error_of;

Summary run(const json& j) {
  return simulate(parse_config(j, "cfg.json"), {.build_timeline = false}).summary;
}

TEST(PredictClusterOptions, ANodesStatedNetworkIsSharedByItsGpus) {
  // The catalog's DGX A100 has eight 200 Gb/s NICs: stating 1600 Gb/s a node changes nothing.
  // Below that, ZeRO-3's collectives over the two nodes are network-bound: what they add to the
  // step over the same 16 GPUs in one node doubles when the node's network halves.
  json j = two_nodes();
  const Summary dgx = run(j);
  j["cluster"]["network_gbps"] = 1600;
  EXPECT_DOUBLE_EQ(run(j).step_time_s, dgx.step_time_s);
  j["cluster"]["gpus_per_node"] = 16;
  const double one_node = run(j).step_time_s;
  j["cluster"]["gpus_per_node"] = 8;
  j["cluster"]["network_gbps"] = 400;
  const double at400 = run(j).step_time_s - one_node;
  j["cluster"]["network_gbps"] = 200;
  const double at200 = run(j).step_time_s - one_node;
  EXPECT_GT(at400, dgx.step_time_s - one_node);
  EXPECT_NEAR(at200 / at400, 2.0, 0.1);
  j["cluster"]["network_gbps"] = -1;
  EXPECT_NE(error_of(j).find("key 'cluster.network_gbps'"), std::string::npos);
}

TEST(PredictClusterOptions, HybridShardingGathersInsideTheNodeAndAllReducesTheShards) {
  // shard_group 8 on two nodes of 8: gathers and reduce-scatters stay on NVLink, an all-reduce of
  // the 1/8 shard crosses the network; the states are sharded over 8, not 16.
  json j = two_nodes();
  j["cluster"]["network_gbps"] = 400;
  const Summary full = run(j);
  j["options"]["shard_group"] = 8;
  const Summary hybrid = run(j);
  EXPECT_LT(hybrid.communication_s, full.communication_s);
  EXPECT_LT(hybrid.step_time_s, full.step_time_s);
  ASSERT_EQ(hybrid.memory.size(), 1u);
  EXPECT_NEAR(static_cast<double>(hybrid.memory[0].optimizer_bytes),
              2.0 * static_cast<double>(full.memory[0].optimizer_bytes),
              1e-6 * static_cast<double>(hybrid.memory[0].optimizer_bytes));
  // A shard group of the whole dp group is plain ZeRO-3.
  j["options"]["shard_group"] = 16;
  EXPECT_DOUBLE_EQ(run(j).step_time_s, full.step_time_s);
  j["options"]["shard_group"] = 6;
  EXPECT_EQ(error_of(j), "cfg.json: key 'options.shard_group': 6 does not divide mesh.dp (16)");
  j["options"]["shard_group"] = 8;
  j["options"]["zero"] = 1;
  EXPECT_NE(error_of(j).find("key 'options.shard_group': needs options.zero 3"), std::string::npos);
}

TEST(PredictClusterOptions, CheckpointingEveryOtherLayerCostsHalfAFullRecomputation) {
  // recompute_every 2: layers 2 and 4 of 4 are recomputed (torchtitan counts from 1), layers 1
  // and 3 keep their activations: the backward's FLOPs and the activations lie halfway.
  const model::GptSpec g = gpt_spec(4, 1024, 16, 1024, 32000);
  model::LayerParallel p;
  const model::GptModel none = model::build_gpt(g, p, 1);
  p.recompute = model::Recompute::kFull;
  const model::GptModel full = model::build_gpt(g, p, 1);
  p.recompute_every = 2;
  const model::GptModel half = model::build_gpt(g, p, 1);
  const auto& n = none.stages[0].cost;
  const auto& f = full.stages[0].cost;
  const auto& h = half.stages[0].cost;
  EXPECT_NEAR(h.input_grad_flops(), (n.input_grad_flops() + f.input_grad_flops()) / 2,
              1e-9 * f.input_grad_flops());
  EXPECT_NEAR(static_cast<double>(h.activation_bytes),
              (static_cast<double>(n.activation_bytes) + f.activation_bytes) / 2,
              0.01 * static_cast<double>(n.activation_bytes));
  EXPECT_EQ(h.forward_flops(), f.forward_flops());
  EXPECT_EQ(half.model_flops_per_microbatch, full.model_flops_per_microbatch);
  // Two stages of two layers: each holds one recomputed layer (the model's 2nd and 4th).
  const model::GptModel split = model::build_gpt(g, p, 2);
  EXPECT_GT(split.stages[0].cost.input_grad_flops(), n.input_grad_flops() / 4);
  json j = two_nodes();
  j["options"]["recompute_every"] = 2;
  EXPECT_NE(error_of(j).find("key 'options.recompute_every': needs options.recompute"),
            std::string::npos);
  j["options"]["recompute"] = "full";
  EXPECT_EQ(error_of(j), "");
}

// Every 5th layer of ranks that hold 4 is no layer: the config asked for recomputation and would
// get none, without a word. Refused naming the key; every 4th still recomputes one layer a rank.
TEST(PredictClusterOptions, RecomputeEveryBeyondTheLayersOfEveryRankIsRefused) {
  const model::GptSpec g = gpt_spec(8, 256, 4, 128, 1024);
  model::LayerParallel p;
  p.recompute = model::Recompute::kFull;
  p.recompute_every = 5;
  const std::vector<int> four_each{4, 4}, owner{0, 1};
  try {
    model::build_gpt(g, p, 2, four_each, owner);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "key 'options.recompute_every': 5 is more than the 4 layers of any pipeline rank: "
              "no layer would be recomputed (layers are counted on each rank; give at most 4, or "
              "recompute \"none\")");
  }
  p.recompute_every = 4;
  const model::GptModel every_fourth = model::build_gpt(g, p, 2, four_each, owner);
  p.recompute = model::Recompute::kNone;
  const model::GptModel none = model::build_gpt(g, p, 2, four_each, owner);
  for (int s : {0, 1})
    EXPECT_GT(every_fourth.stages[s].cost.input_grad_flops(),
              none.stages[s].cost.input_grad_flops());
}

TEST(PredictClusterOptions, EveryOtherLayerIsCountedOnEachPipelineRank) {
  // torchtitan counts the blocks it checkpoints per process, across a rank's model chunks (its
  // `_layer_sac_count`). Four one-layer chunks, interleaved over two ranks (stages 0 and 2 on
  // rank 0, 1 and 3 on rank 1): each rank recomputes its own second layer, stages 2 and 3.
  // Counted over the whole model instead, rank 1 would recompute both of its layers (the model's
  // 2nd and 4th) and rank 0 none.
  const model::GptSpec g = gpt_spec(4, 1024, 16, 1024, 32000);
  model::LayerParallel p;
  const std::vector<int> one_each{1, 1, 1, 1}, owner{0, 1, 0, 1};
  const model::GptModel none = model::build_gpt(g, p, 4, one_each, owner);
  p.recompute = model::Recompute::kFull;
  p.recompute_every = 2;
  const model::GptModel half = model::build_gpt(g, p, 4, one_each, owner);
  for (int s : {0, 1})
    EXPECT_DOUBLE_EQ(half.stages[s].cost.input_grad_flops(), none.stages[s].cost.input_grad_flops())
        << "stage " << s;
  for (int s : {2, 3})
    EXPECT_GT(half.stages[s].cost.input_grad_flops(), none.stages[s].cost.input_grad_flops())
        << "stage " << s;
}

TEST(PredictClusterOptions, ZeroThreeCollectivesAreOnePerLayerEachWithItsLatency) {
  // A stage of 40 layers gathers 40 times a 40th of its bytes: the bandwidth term is the same,
  // the latency is paid 40 times (64 ranks over 8 H100 nodes, 26 GB: MPT-13b's bf16 parameters).
  const cost::Hardware hw = cost::find_hardware("h100-sxm");
  const cost::GroupSpan span{64, 8, 8};
  const double bytes = 26e9;
  const auto kind = cost::CollectiveKind::kAllGather;
  const double one = cost::collective_time(hw, kind, bytes, span).seconds;
  const double per_layer = cost::collective_time(hw, kind, bytes / 40, span).seconds;
  EXPECT_DOUBLE_EQ(zero3_collective_seconds(hw, kind, bytes, span, 40, nullptr), 40 * per_layer);
  EXPECT_DOUBLE_EQ(zero3_collective_seconds(hw, kind, bytes, span, 1, nullptr), one);
  EXPECT_GT(40 * per_layer, one);
  EXPECT_LT(40 * per_layer, 1.2 * one);  // large messages: the bandwidth term dominates
}

// Tensor parallelism over a whole H100 node without sequence parallelism: its all-reduces are
// the tp collectives, which NCCL runs on NVLink SHARP where the catalog has it (item 28).
json tp8_h100() {
  return json::parse(
      R"({"model": {"kind": "gpt", "layers": 2, "hidden": 8192, "heads": 64, "seq": 4096, "vocab": 32000},
          "mesh": {"tp": 8}, "batch": {"global": 1, "micro": 1},
          "framework": "megatron-core-2024", "cluster": {"gpu": "h100-sxm"}})");
}

double tp_seconds(const json& j) {
  const Summary s = simulate(parse_config(j, "cfg.json"), {.build_timeline = false}).summary;
  return s.breakdown.busy[Term::kTpCommunication];
}

TEST(PredictClusterOptions, NvlsOffPricesAsTheCatalogWithoutIt) {
  // A run launched with NCCL_NVLS_ENABLE=0 (the NeMo recipes, item 30) prices its all-reduces
  // inside a node as a GPU without NVLink SHARP: exactly as the catalog entry with the figure
  // taken out, and slower than with it.
  json j = tp8_h100();
  const double with = tp_seconds(j);
  j["cluster"]["nvls"] = false;
  const double without = tp_seconds(j);
  EXPECT_GT(without, 1.2 * with);
  json entry;
  std::ifstream(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/h100-sxm.json") >> entry;
  ASSERT_TRUE(entry["intra_node"].contains("nvls_bus_bandwidth_bytes_per_s"));
  entry["intra_node"].erase("nvls_bus_bandwidth_bytes_per_s");
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("meshscope_test_h100_without_nvls_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << entry.dump();
  json plain = tp8_h100();
  plain["cluster"]["gpu"] = path.string();
  EXPECT_DOUBLE_EQ(tp_seconds(plain), without);
  std::filesystem::remove(path);
  // Without NVLS in the catalog (A100) the key changes nothing; it must be a boolean.
  j["cluster"]["gpu"] = "a100-80gb";
  const double a100 = tp_seconds(j);
  j["cluster"]["nvls"] = true;
  EXPECT_DOUBLE_EQ(tp_seconds(j), a100);
  j["cluster"]["nvls"] = "off";
  EXPECT_EQ(error_of(j), "cfg.json: key 'cluster.nvls': must be true or false");
}

TEST(PredictClusterOptions, AKernelClassInFlashAttentionOverridesTheProfiles) {
  // megatron-core-2024 runs cuDNN's attention on Hopper (flash3 class); a run whose launcher turned
  // it off (NVTE_FUSED_ATTN=0, item 30) says "flash2", and its attention takes as long as that
  // class's forward and backward rates make it (a backward does 2.5 forwards' FLOPs), with that
  // class's share for the profile's attention dropout (item 37; head dim 128 here).
  json j = tp8_h100();
  j["mesh"] = {{"tp", 1}};
  j["model"]["hidden"] = 2048;
  j["model"]["heads"] = 16;
  auto attention = [&](const json& k) {
    j["options"]["flash_attention"] = k;
    return simulate(parse_config(j, "cfg.json"), {.build_timeline = false})
        .summary.breakdown.busy[Term::kAttention];
  };
  const double profile = attention(true);
  EXPECT_DOUBLE_EQ(attention("flash3"), profile);
  const double fa2 = attention("flash2");
  const cost::Hardware hw = cost::find_hardware("h100-sxm");
  const cost::Framework fw = cost::find_framework("megatron-core-2024");
  ASSERT_TRUE(fw.attention_dropout);
  auto relative = [&](cost::AttentionKernel k) {
    const cost::AttentionRates r = cost::attention_rates(hw, k, fw.attention_forward_speedup);
    const double dropout = k == cost::AttentionKernel::kFlash2 ? cost::kFlash2DropoutShareAt128
                                                               : cost::kFusedDropoutShareAt128;
    return (1 + dropout) * (1 / r.forward + model::kAttentionBackwardFlopRatio / r.backward);
  };
  // Within 1%: each kernel's launch overhead (2 us in the catalog) is the same for both classes.
  EXPECT_NEAR(fa2 / profile,
              relative(cost::AttentionKernel::kFlash2) / relative(cost::AttentionKernel::kFlash3),
              0.01);
  EXPECT_GT(fa2, 1.3 * profile);
  j["options"]["flash_attention"] = "flash4";
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.flash_attention': 'flash4' is not true, false, flash1, flash2 "
            "or flash3");
  j["options"]["flash_attention"] = 1;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.flash_attention': must be true, false, or a kernel class: "
            "flash1, flash2 or flash3");
}

}  // namespace
}  // namespace meshscope::predict
