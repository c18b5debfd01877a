// Config keys for what published runs state about their cluster and sharding: a node's network
// bandwidth (cluster.network_gbps), hybrid sharding (options.shard_group: PyTorch FSDP's
// HYBRID_SHARD) and checkpointing every n-th layer (options.recompute_every); ZeRO-3's collectives
// issued layer by layer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/collective_model.h"
#include "sim/cost/hardware.h"
#include "sim/model/gpt.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"
#include "sim/predict/zero.h"
#include "tests/sim/config_error.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

// 16 GPUs on two 8-GPU nodes, ZeRO-3 behind collectives the framework waits for (megatron-2022),
// so that their prices show in the step.
json two_nodes() {
  return json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 2048, "heads": 16, "seq": 2048, "vocab": 32000},
          "mesh": {"dp": 16}, "batch": {"global": 16, "micro": 1}, "schedule": "dp",
          "framework": "megatron-2022",
          "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
          "options": {"zero": 3}})");
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
  model::GptSpec g;
  g.layers = 4;
  g.hidden = 1024;
  g.heads = 16;
  g.seq = 1024;
  g.vocab = 32000;
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

TEST(PredictClusterOptions, EveryOtherLayerIsCountedOnEachPipelineRank) {
  // torchtitan counts the blocks it checkpoints per process, across a rank's model chunks (its
  // `_layer_sac_count`). Four one-layer chunks, interleaved over two ranks (stages 0 and 2 on
  // rank 0, 1 and 3 on rank 1): each rank recomputes its own second layer, stages 2 and 3.
  // Counted over the whole model instead, rank 1 would recompute both of its layers (the model's
  // 2nd and 4th) and rank 0 none.
  model::GptSpec g;
  g.layers = 4;
  g.hidden = 1024;
  g.heads = 16;
  g.seq = 1024;
  g.vocab = 32000;
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

}  // namespace
}  // namespace meshscope::predict
