// The config's "framework" key: its default, a profile's effect on a prediction, and the
// one-line errors for an unknown profile or a recomputation the framework does not offer.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/compute_model.h"
#include "sim/cost/hardware.h"
#include "sim/model/transformer.h"
#include "sim/predict/breakdown.h"
#include "sim/predict/config.h"
#include "sim/predict/fit_alternatives.h"
#include "sim/predict/simulate.h"
#include "sim/predict/workload_costs.h"
#include "tests/sim/config_error.h"
#include "tests/sim/predict_profile_fixture.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

using testing::error_of;
using testing::exposed_profile;
using testing::parameter_pass_s;
using testing::summary_of;
using testing::tiny_gpt;
using testing::write_profile;

TEST(PredictFrameworkConfig, DefaultsToMegatronCore2024) {
  EXPECT_EQ(parse_config(tiny_gpt(), "cfg.json").framework, "megatron-core-2024");
  EXPECT_EQ(
      simulate(parse_config(tiny_gpt(), "cfg.json"), {.build_timeline = false}).summary.framework,
      "megatron-core-2024");
}

TEST(PredictFrameworkConfig, UnknownProfilesAndUnofferedRecomputationAreRefused) {
  json j = tiny_gpt();
  j["framework"] = "nope";
  EXPECT_NE(error_of(j).find("cfg.json: key 'framework': unknown framework 'nope'"),
            std::string::npos)
      << error_of(j);
  j["options"]["recompute"] = "selective";
  for (const std::string name : {"llm-foundry", "megatron-2021"}) {  // 2021: before selective
    j["framework"] = name;
    EXPECT_EQ(error_of(j), "cfg.json: key 'options.recompute': framework '" + name +
                               "' has no 'selective' recomputation");
  }
}

TEST(PredictFrameworkConfig, AnEagerFrameworksElementwiseTrafficAndFa2CostTime) {
  // torchtitan runs eager RMSNorm and RoPE (many passes) and FA2 on H100; megatron-core fuses
  // them and runs FA3-class attention: the same model and mesh must be slower under torchtitan.
  json j = tiny_gpt();
  j["model"]["learned_positions"] = false;
  j["framework"] = "megatron-core-2024";
  const Summary fused = summary_of(j);
  j["framework"] = "torchtitan";
  const Summary eager = summary_of(j);
  EXPECT_GT(eager.step_time_s, fused.step_time_s * 1.05);
  EXPECT_EQ(eager.framework, "torchtitan");
}

TEST(PredictFrameworkConfig, Fp32GradientReductionMovesTwiceTheBytes) {
  // Two profiles alike but for grad_reduce_bytes, their ZeRO-3 collectives exposed: the fp32
  // reduce-scatters take longer, the all-gathers (bf16 parameters) do not change.
  auto profile = [](const char* name, int bytes) {
    return exposed_profile(name, "\"grad_reduce_bytes\": " + std::to_string(bytes));
  };
  json j = tiny_gpt();
  j["options"]["zero"] = 3;
  j["framework"] = profile("reduce-bf16", 2);
  const Summary half = summary_of(j);
  j["framework"] = profile("reduce-fp32", 4);
  const Summary full = summary_of(j);
  EXPECT_GT(full.communication_s, half.communication_s * 1.2);
  EXPECT_GT(full.step_time_s, half.step_time_s);
  // By precision (Megatron-LM's fp32 main gradients under bf16): a bf16 run reduces 4 bytes an
  // element, an fp16 run its own 2.
  j["framework"] = exposed_profile("reduce-by-precision", R"("grad_reduce_bytes": {"bf16": 4})");
  EXPECT_DOUBLE_EQ(summary_of(j).communication_s, full.communication_s);
  j["options"]["precision"] = "fp16";
  const double by_precision_fp16 = summary_of(j).communication_s;
  j["framework"] = profile("reduce-bf16", 2);
  EXPECT_DOUBLE_EQ(by_precision_fp16, summary_of(j).communication_s);
}

TEST(PredictFrameworkConfig, ShardedCopiesCostTheirBytesAtTheMemoryRateEachMicrobatch) {
  // Two profiles alike but for sharded_copies, collectives exposed: under ZeRO-3 every microbatch
  // pays (2 gathers + 1 reduction) x bytes per parameter x the stage's parameters at the memory
  // rate; without ZeRO-3 nothing changes.
  auto profile = [](const char* name, const std::string& copies) {
    return exposed_profile(name, "\"sharded_copies\": " + copies);
  };
  json j = tiny_gpt();
  j["options"]["zero"] = 3;
  j["framework"] = profile("no-copies", "{}");
  const PredictConfig plain = parse_config(j, "cfg.json");
  const Summary none = simulate(plain, {.build_timeline = false}).summary;
  j["framework"] = profile("copies", R"({"gather": 4, "reduce": 6})");
  const Summary copies = summary_of(j);
  const double per_microbatch = parameter_pass_s(plain, 2 * 4 + 6);
  EXPECT_NEAR(copies.step_time_s - none.step_time_s, plain.microbatches() * per_microbatch, 1e-7);
  EXPECT_GT(per_microbatch, 0);
  j["options"]["zero"] = 1;
  const Summary zero1 = summary_of(j);
  j["framework"] = profile("no-copies", "{}");
  EXPECT_DOUBLE_EQ(zero1.step_time_s, summary_of(j).step_time_s);
}

TEST(PredictFrameworkConfig, WeightCastsCostTheirBytesEachMicrobatchAtAnyZeroStage) {
  // Two profiles alike but for weight_casts, collectives exposed: every microbatch pays
  // (forward + backward) bytes per parameter over the stage's parameters at the memory rate, with
  // or without ZeRO, and the breakdown names the term.
  auto profile = [](const char* name, const std::string& casts) {
    return exposed_profile(name, "\"weight_casts\": " + casts);
  };
  for (int zero : {0, 1}) {
    SCOPED_TRACE(zero);
    json j = tiny_gpt();
    j["options"]["zero"] = zero;
    j["framework"] = profile("no-casts", "{}");
    const PredictConfig plain = parse_config(j, "cfg.json");
    const Summary none = simulate(plain, {.build_timeline = false}).summary;
    j["framework"] = profile("casts", R"({"forward": 6, "backward": 18})");
    const Summary casts = summary_of(j);
    const double per_microbatch = parameter_pass_s(plain, 6 + 18);
    EXPECT_GT(per_microbatch, 0);
    EXPECT_NEAR(casts.step_time_s - none.step_time_s, plain.microbatches() * per_microbatch, 1e-7);
    EXPECT_NEAR(casts.breakdown.busy[Term::kWeightCasts], plain.microbatches() * per_microbatch,
                1e-7);
  }
}

TEST(PredictFrameworkConfig, GradAccumulationCostsItsPrecisionsBytesEachMicrobatch) {
  // Two profiles alike but for grad_accumulation: every microbatch pays the run's precision's
  // bytes per parameter over the stage's parameters at the memory rate, the breakdown names the
  // term, and a precision the profile gives nothing for pays nothing.
  auto profile = [](const char* name, const std::string& bytes) {
    return exposed_profile(name, "\"grad_accumulation\": " + bytes);
  };
  json j = tiny_gpt();
  j["framework"] = profile("no-accumulation", "{}");
  const PredictConfig plain = parse_config(j, "cfg.json");
  const Summary none = simulate(plain, {.build_timeline = false}).summary;
  j["framework"] = profile("accumulation", R"({"bf16": 18, "fp16": 6})");
  const Summary bf16 = summary_of(j);
  const double per_microbatch = parameter_pass_s(plain, 18);
  EXPECT_GT(plain.microbatches(), 1);
  EXPECT_GT(per_microbatch, 0);
  EXPECT_NEAR(bf16.step_time_s - none.step_time_s, plain.microbatches() * per_microbatch, 1e-7);
  EXPECT_NEAR(bf16.breakdown.busy[Term::kGradAccumulation], plain.microbatches() * per_microbatch,
              1e-7);
  EXPECT_EQ(none.breakdown.busy[Term::kGradAccumulation], 0);
  // fp16 pays its own 6 bytes; fp32, which the profile does not name, pays nothing.
  j["options"]["precision"] = "fp16";
  const Summary fp16 = summary_of(j);
  EXPECT_NEAR(fp16.breakdown.busy[Term::kGradAccumulation],
              plain.microbatches() * per_microbatch / 3, 1e-7);
  j["options"]["precision"] = "fp32";
  EXPECT_EQ(summary_of(j).breakdown.busy[Term::kGradAccumulation], 0);
}

TEST(PredictFrameworkConfig, Megatron2021PaysItsGradientHookEachMicrobatch) {
  // The same GPT under tensor parallelism with full recomputation, as Megatron-LM of 2022 and of
  // 2021 run it: the 2021 stack's step is longer by at least its gradient hook (10 bytes a
  // parameter each microbatch under bf16, at the memory rate), which the breakdown names.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 2}, {"tp", 4}};
  j["options"]["recompute"] = "full";
  j["options"]["flash_attention"] = false;  // neither stack had it
  j["framework"] = "megatron-2022";
  const PredictConfig later = parse_config(j, "cfg.json");
  const Summary s2022 = simulate(later, {.build_timeline = false}).summary;
  j["framework"] = "megatron-2021";
  const Summary s2021 = summary_of(j);
  const double hook = later.microbatches() * parameter_pass_s(later, 10);
  EXPECT_GT(hook, 0);
  EXPECT_NEAR(s2021.breakdown.busy[Term::kGradAccumulation], hook, 1e-7);
  EXPECT_EQ(s2022.breakdown.busy[Term::kGradAccumulation], 0);
  EXPECT_GT(s2021.step_time_s, s2022.step_time_s + hook);
}

TEST(PredictFrameworkConfig, WhatAProfileLacksIsOffByDefaultAndRefusedWhenAskedFor) {
  // megatron-2021 lacks sequence parallelism and flash attention: a config of it computes
  // attention unfused unless it asks, and asking for either is an error naming the key.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 2}, {"tp", 4}};
  j["framework"] = "megatron-2021";
  const PredictConfig c = parse_config(j, "cfg.json");
  EXPECT_FALSE(c.flash_attention);
  EXPECT_FALSE(c.sequence_parallel);
  j["options"]["flash_attention"] = true;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.flash_attention': framework 'megatron-2021' has no flash "
            "attention (its profile's \"lacks\")");
  j["options"]["flash_attention"] = "flash2";
  EXPECT_NE(error_of(j).find("has no flash attention"), std::string::npos) << error_of(j);
  j["options"].erase("flash_attention");
  j["options"]["sequence_parallel"] = true;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.sequence_parallel': framework 'megatron-2021' has no sequence "
            "parallelism (its profile's \"lacks\")");
  // A profile that lacks nothing keeps flash attention on by default.
  j["options"].erase("sequence_parallel");
  j["framework"] = "megatron-2022";
  EXPECT_TRUE(parse_config(j, "cfg.json").flash_attention);
}

TEST(PredictFrameworkConfig, FlashAttention3AskedForByNameNeedsAGpuWithItsRate) {
  // FlashAttention-3 runs on Hopper: the A100 entry has no rate for it. Named in the config it is
  // refused there; a profile's flash3 on an A100 runs as flash2, as FlashAttention's dispatch does.
  json j = tiny_gpt();
  j["cluster"]["gpu"] = "a100-80gb";
  j["options"]["flash_attention"] = "flash3";
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.flash_attention': gpu 'a100-80gb' has no FlashAttention-3 "
            "rate (its catalog entry's efficiency.attention_flash3; FlashAttention-3 needs "
            "Hopper): give flash2");
  j["cluster"]["gpu"] = "h100-sxm";
  EXPECT_EQ(error_of(j), "");
  j["cluster"]["gpu"] = "a100-80gb";
  j["options"].erase("flash_attention");
  j["framework"] = "megatron-core-2024";
  EXPECT_EQ(error_of(j), "");
}

TEST(PredictFrameworkConfig, AStackThatParallelizesByFsdpAloneRefusesOtherSplits) {
  // llm-foundry and fms-fsdp run FSDP (or DDP) alone: a mesh splitting a layer, the layers or the
  // sequence is refused naming its key; with each split 1 they predict as before.
  for (const char* stack : {"llm-foundry", "fms-fsdp"}) {
    json j = tiny_gpt();
    j["framework"] = stack;
    j["options"]["zero"] = 3;
    EXPECT_NO_THROW(parse_config(j, "cfg.json")) << stack;
    const std::string fw = std::string("framework '") + stack + "' has no ";
    j["mesh"] = {{"dp", 4}, {"tp", 2}};
    EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.tp': " + fw +
                               "tensor parallelism (its profile's \"lacks\"): it must be 1");
    j["mesh"] = {{"dp", 4}, {"pp", 2}};
    j["schedule"] = "1f1b";
    EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.pp': " + fw +
                               "pipeline parallelism (its profile's \"lacks\"): it must be 1");
    j["mesh"] = {{"dp", 4}, {"cp", 2}};
    EXPECT_EQ(error_of(j), "cfg.json: key 'mesh.cp': " + fw +
                               "context parallelism (its profile's \"lacks\"): it must be 1");
  }
  // torchtitan runs all three.
  json j = tiny_gpt();
  j["framework"] = "torchtitan";
  j["mesh"] = {{"dp", 1}, {"tp", 2}, {"pp", 2}, {"cp", 2}};
  j["schedule"] = "1f1b";
  EXPECT_NO_THROW(parse_config(j, "cfg.json")) << error_of(j);
}

// The h100-sxm entry as a run of c's GPUs computes on it: at its slowest GPU's sustained rate
// (catalog `sustained_spread`), as predict prices it.
cost::Hardware h100_for(const PredictConfig& c) {
  cost::Hardware hw = cost::find_hardware("h100-sxm");
  hw.efficiency.sustained *= cost::slowest_gpu_share(hw.efficiency, c.gpus());
  return hw;
}

TEST(PredictFrameworkConfig, ARunsGemmsRunAtItsSlowestGpusSustainedRate) {
  // The same replica at dp 8 and dp 1,024 on H100s (no launch overhead, so that every GEMM's time
  // is its FLOPs over the rate): its GEMMs take longer by the ratio of the two runs'
  // slowest-GPU shares; on an entry without a spread they take as long.
  json j = tiny_gpt();
  PredictConfig small = parse_config(j, "cfg.json");
  j["mesh"]["dp"] = 1024;
  j["batch"]["global"] = 2048;
  PredictConfig large = parse_config(j, "cfg.json");
  cost::Hardware hw = cost::find_hardware("h100-sxm");
  hw.launch_overhead_ns = 0;
  const auto gemm_s = [](PredictConfig c, const cost::Hardware& entry) {
    c.hardware = {c.gpu, std::make_shared<const cost::Hardware>(entry)};
    return simulate(c, {.build_timeline = false}).summary.breakdown.busy[Term::kGemm];
  };
  EXPECT_NEAR(
      gemm_s(large, hw) / gemm_s(small, hw),
      cost::slowest_gpu_share(hw.efficiency, 8) / cost::slowest_gpu_share(hw.efficiency, 1024),
      1e-9);
  EXPECT_GT(gemm_s(large, hw), gemm_s(small, hw) * 1.015);
  hw.efficiency.sustained_spread = 0;
  EXPECT_NEAR(gemm_s(large, hw), gemm_s(small, hw), 1e-12);
}

TEST(PredictFrameworkConfig, EarlyStopSkipsRecomputingEachLayersLastGemm) {
  // Two profiles alike but for recompute_early_stop: under full recomputation each microbatch's
  // backward skips every layer's fc2 and the residual add after it; the breakdown's recompute term
  // shrinks by as much. Without recomputation nothing changes.
  json j = tiny_gpt();
  j["options"]["recompute"] = "full";
  j["framework"] = exposed_profile("whole-forward", R"("recompute": ["none", "full"])");
  const PredictConfig plain = parse_config(j, "cfg.json");
  const Summary whole = simulate(plain, {.build_timeline = false}).summary;
  j["framework"] = exposed_profile(
      "early-stop", R"("recompute": ["none", "full"], "recompute_early_stop": true)");
  const Summary early = summary_of(j);
  const cost::ComputeModel compute(h100_for(plain), plain.precision);
  const WorkloadCosts w = workload_costs(plain);
  double skipped = 0;
  for (const model::OpCost& op : w.stages[0].forward)
    if (op.name == "mlp.fc2" || op.name == "mlp.dropout_residual")
      skipped += compute.op_seconds(op);
  EXPECT_GT(skipped, 0);
  EXPECT_NEAR(whole.step_time_s - early.step_time_s, plain.microbatches() * skipped, 1e-7);
  EXPECT_NEAR(whole.breakdown.busy[Term::kRecompute] - early.breakdown.busy[Term::kRecompute],
              plain.microbatches() * skipped, 1e-7);
  j["options"]["recompute"] = "none";
  const Summary none_early = summary_of(j);
  j["framework"] = exposed_profile("whole-forward", R"("recompute": ["none", "full"])");
  EXPECT_DOUBLE_EQ(none_early.step_time_s, summary_of(j).step_time_s);
}

TEST(PredictFrameworkConfig, TheLossMovesItsProfilesBytesPerLogit) {
  // Two profiles alike but for loss_bytes, collectives exposed: each microbatch's loss and its
  // gradient move (forward + backward) bytes per logit of its tokens x the vocabulary, at the
  // memory rate; the breakdown's loss term moves by as much.
  json j = tiny_gpt();
  j["framework"] = exposed_profile("default-loss", "\"loss_bytes\": {}");
  const PredictConfig plain = parse_config(j, "cfg.json");
  const Summary fp32 = simulate(plain, {.build_timeline = false}).summary;
  j["framework"] =
      exposed_profile("eager-loss", R"("loss_bytes": {"forward": 22, "backward": 26})");
  const Summary eager = summary_of(j);
  const cost::ComputeModel compute(cost::find_hardware("h100-sxm"), plain.precision);
  const double logits = 2048.0 * 51200;
  const double extra =
      compute.stream_seconds(logits * (22 - 8)) + compute.stream_seconds(logits * (26 - 8));
  EXPECT_GT(extra, 0);
  EXPECT_NEAR(eager.step_time_s - fp32.step_time_s, plain.microbatches() * extra, 1e-7);
  EXPECT_NEAR(eager.breakdown.busy[Term::kLoss] - fp32.breakdown.busy[Term::kLoss],
              plain.microbatches() * extra, 1e-7);
}

TEST(PredictFrameworkConfig, AFasterAttentionForwardShortensOnlyTheRecomputation) {
  // Two profiles alike but for attention_forward_speedup: without recomputation a forward and
  // its backward take as long as at the combined rate; with full recomputation the attention
  // forward runs a second time, at the faster forward rate, so the step is shorter by that much.
  json j = tiny_gpt();
  j["options"]["flash_attention"] = true;
  j["framework"] = exposed_profile("one-rate", R"("flash_attention": "flash1")");
  const PredictConfig plain = parse_config(j, "cfg.json");
  j["framework"] = exposed_profile(
      "fast-forward", R"("flash_attention": "flash1", "attention_forward_speedup": 1.5)");
  const PredictConfig split = parse_config(j, "cfg.json");
  const auto step = [](PredictConfig c, const char* recompute) {
    c.recompute = *model::parse_recompute(recompute);
    return simulate(c, {.build_timeline = false}).summary;
  };
  const Summary plain_none = step(plain, "none"), split_none = step(split, "none");
  EXPECT_NEAR(split_none.step_time_s, plain_none.step_time_s, 1e-6 * plain_none.step_time_s);
  EXPECT_NEAR(split_none.breakdown.busy[Term::kAttention],
              plain_none.breakdown.busy[Term::kAttention],
              1e-6 * plain_none.breakdown.busy[Term::kAttention]);
  const Summary plain_full = step(plain, "full"), split_full = step(split, "full");
  // Each layer's recomputed attention forward (2 T s heads d FLOPs, causal) at the forward rate
  // instead of the combined one, 4 layers x 2 microbatches on each device.
  cost::Hardware hw = h100_for(plain);
  const double combined = cost::attention_efficiency(hw, cost::AttentionKernel::kFlash1);
  const double forward = cost::attention_rates(hw, cost::AttentionKernel::kFlash1, 1.5).forward;
  model::OpCost core{"attn.core", model::OpKind::kAttention, 2.0 * 2048 * 2048 * 16 * 64};
  core.m = 2048;  // query tokens of a sequence: the H100's rates scale to them (item 35)
  hw.efficiency.attention = combined;
  const double at_combined = cost::ComputeModel(hw, plain.precision).op_seconds(core);
  hw.efficiency.attention = forward;
  const double at_forward = cost::ComputeModel(hw, plain.precision).op_seconds(core);
  const double saved = 4 * 2 * (at_combined - at_forward);
  EXPECT_GT(saved, 0);
  EXPECT_NEAR(
      plain_full.breakdown.busy[Term::kRecompute] - split_full.breakdown.busy[Term::kRecompute],
      saved, 1e-3 * saved);
  EXPECT_NEAR(plain_full.step_time_s - split_full.step_time_s, saved, 1e-3 * saved);
}

TEST(PredictFrameworkConfig, AttentionDropoutIsChargedAtTheKernelClassesMeasuredShare) {
  // A profile whose stack applies attention dropout: its fused kernel takes its class's measured
  // share longer (FlashAttention-1: the FlashAttention paper's, by length and pass; FA2 and the
  // FA3 class: one figure each; docs/ACCURACY.md items 36 and 37), on every layer's forward and
  // backward kernel; memory does not change.
  json j = tiny_gpt();  // 16 heads of 64, 2,048 tokens
  j["options"]["flash_attention"] = true;
  int profiles = 0;
  const auto attention = [&](const std::string& keys) {
    j["framework"] = exposed_profile("dropout-" + std::to_string(++profiles), keys);
    const PredictConfig c = parse_config(j, "cfg.json");
    return std::make_pair(c, summary_of(j).breakdown.busy[Term::kAttention]);
  };
  for (const cost::AttentionKernel k :
       {cost::AttentionKernel::kFlash1, cost::AttentionKernel::kFlash2,
        cost::AttentionKernel::kFlash3}) {
    SCOPED_TRACE(std::string(cost::name(k)));
    const std::string kernel = "\"flash_attention\": \"" + std::string(cost::name(k)) + "\"";
    const auto [c, plain] = attention(kernel);
    const double dropped = attention(kernel + ", \"attention_dropout\": true").second;
    // Each layer's forward and backward kernels, 4 layers x 2 microbatches on each device.
    cost::Hardware hw = h100_for(c);
    hw.efficiency.attention = cost::attention_efficiency(hw, k);
    const cost::ComputeModel cm(hw, c.precision, nullptr, k);
    model::OpCost core{"attn.core", model::OpKind::kAttention, 2.0 * 2048 * 2048 * 16 * 64};
    core.m = 2048;
    core.k = 64;
    model::OpCost back = core;
    back.flops *= model::kAttentionBackwardFlopRatio;
    back.backward = true;
    const double before = cm.op_seconds(core) + cm.op_seconds(back);
    core.dropout = back.dropout = true;
    const double added = 4 * 2 * (cm.op_seconds(core) + cm.op_seconds(back) - before);
    // At head dim 64: FA1 about 19% (its forward 21.0%, backward 18.9%), FA2 9.5%, FA3 6.7%, of
    // the kernels' time less their launches.
    const double share = k == cost::AttentionKernel::kFlash1   ? 0.17
                         : k == cost::AttentionKernel::kFlash2 ? 0.085
                                                               : 0.06;
    EXPECT_GT(added, share * 4 * 2 * before);
    EXPECT_LT(added, (share + 0.04) * 4 * 2 * before);
    EXPECT_NEAR(dropped - plain, added, 1e-6 * added);
  }
  // Memory does not change: the kernel draws the mask again in its backward.
  j["framework"] = exposed_profile("dropout-mem", R"("flash_attention": "flash2")");
  const double mem = summary_of(j).peak_memory_bytes;
  j["framework"] =
      exposed_profile("dropout-mem2", R"("flash_attention": "flash2", "attention_dropout": true)");
  EXPECT_DOUBLE_EQ(summary_of(j).peak_memory_bytes, mem);
}

TEST(PredictFrameworkConfig, SelectiveRecomputationRerunsTheFlashKernelWhereTheProfileSaysSo) {
  // megatron-core checkpoints its core attention under 'selective' (docs/ACCURACY.md item 38): each
  // layer's attention kernel runs its forward again before its backward, priced as that forward.
  // A profile without the key leaves the kernel as it is, as Megatron-LM's ParallelAttention does.
  json j = tiny_gpt();  // 16 heads of 64, 2,048 tokens, 4 layers, 2 microbatches a device
  j["options"]["flash_attention"] = true;
  j["options"]["recompute"] = "selective";
  const std::string kernel = R"("flash_attention": "flash2", )";
  j["framework"] = exposed_profile("selective-legacy", kernel + R"("recompute": ["selective"])");
  const Summary legacy = summary_of(j);
  j["framework"] =
      exposed_profile("selective-core",
                      kernel + R"("recompute": ["selective"], "selective_recomputes_flash": true)");
  const PredictConfig c = parse_config(j, "cfg.json");
  const Summary core = summary_of(j);
  EXPECT_EQ(legacy.breakdown.busy[Term::kRecompute], 0);
  cost::Hardware hw = h100_for(c);
  hw.efficiency.attention = cost::attention_efficiency(hw, cost::AttentionKernel::kFlash2);
  const cost::ComputeModel cm(hw, c.precision, nullptr, cost::AttentionKernel::kFlash2);
  model::OpCost forward{"attn.core", model::OpKind::kAttention, 2.0 * 2048 * 2048 * 16 * 64};
  forward.m = 2048;
  forward.k = 64;
  const double again = 4 * 2 * cm.op_seconds(forward);
  EXPECT_NEAR(core.breakdown.busy[Term::kRecompute], again, 1e-6 * again);
  EXPECT_DOUBLE_EQ(core.breakdown.busy[Term::kAttention], legacy.breakdown.busy[Term::kAttention]);
  EXPECT_GT(core.step_time_s, legacy.step_time_s + 0.9 * again);
  // The kernel's softmax statistics are not kept: memory falls.
  EXPECT_LT(core.peak_memory_bytes, legacy.peak_memory_bytes);
}

TEST(PredictFrameworkConfig, TheLossKeepsItsProfilesSavedBytesPerLogitInMemory) {
  // Two profiles alike but for loss_saved_bytes: with one microbatch in flight (pp 1), the peak
  // activations differ by the bytes per logit saved times one microbatch's logits; the step time
  // does not move.
  json j = tiny_gpt();
  j["framework"] = write_profile("fp32-softmax", "");
  const Summary fp32 = summary_of(j);
  j["framework"] = write_profile("bf16-logits", R"(, "loss_saved_bytes": 2)");
  const Summary bf16 = summary_of(j);
  ASSERT_EQ(fp32.memory.size(), 1u);
  ASSERT_EQ(bf16.memory.size(), 1u);
  EXPECT_EQ(fp32.memory[0].activations_bytes - bf16.memory[0].activations_bytes,
            int64_t{2048} * 51200 * (4 - 2));
  EXPECT_EQ(fp32.peak_memory_bytes - bf16.peak_memory_bytes, int64_t{2048} * 51200 * 2);
  EXPECT_DOUBLE_EQ(fp32.step_time_s, bf16.step_time_s);
}

TEST(PredictFrameworkConfig, TheLossWorkingSetAddsToThePeakOfTheRankThatComputesTheLoss) {
  // Two profiles alike but for loss_peak_bytes, pipelined over 2 ranks: the rank of the last
  // stage holds (peak - saved) bytes of each of a microbatch's logits beyond its activations, once
  // (the loss runs one microbatch at a time); the first rank and the step time do not move.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["framework"] = write_profile("loss-peak-4", R"(, "loss_peak_bytes": 4)");
  const Summary in_place = summary_of(j);
  j["framework"] = write_profile("loss-peak-12", R"(, "loss_peak_bytes": 12)");
  const Summary eager = summary_of(j);
  ASSERT_EQ(eager.memory.size(), 2u);
  ASSERT_EQ(in_place.memory.size(), 2u);
  const int64_t working = int64_t{2048} * 51200 * (12 - 4);
  EXPECT_EQ(eager.memory[1].working_bytes, working);
  EXPECT_EQ(in_place.memory[1].working_bytes, 0);
  EXPECT_EQ(eager.memory[1].total() - in_place.memory[1].total(), working);
  EXPECT_EQ(eager.memory[0].working_bytes, 0);
  EXPECT_EQ(eager.memory[0].total(), in_place.memory[0].total());
  EXPECT_EQ(eager.memory[1].activations_bytes, in_place.memory[1].activations_bytes);
  EXPECT_DOUBLE_EQ(eager.step_time_s, in_place.step_time_s);
}

TEST(PredictFrameworkConfig, AttentionIsPricedAtTheHeadDimensionTheProfilesKernelRuns) {
  // Heads of 96: FlashAttention-1 (llm-foundry) runs them in its 128 kernel, FlashAttention-2
  // (torchtitan) in its 96 one; heads of 128 run at 128 in both.
  auto attention_flops = [](int hidden, const char* framework) {
    json j = tiny_gpt();
    j["model"]["hidden"] = hidden;
    j["framework"] = framework;
    const WorkloadCosts w = workload_costs(parse_config(j, "cfg.json"));
    for (const model::OpCost& op : w.stages[0].forward)
      if (op.name == "attn.core") return op.flops;
    ADD_FAILURE() << "no attn.core";
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(attention_flops(1536, "llm-foundry"),
                   attention_flops(1536, "torchtitan") * 128 / 96);
  EXPECT_DOUBLE_EQ(attention_flops(2048, "llm-foundry"), attention_flops(2048, "torchtitan"));
}

TEST(PredictFrameworkConfig, PipelineSendsFollowTheProfilesP2p) {
  // Two stages on two nodes of 8 (tp 8, no sequence parallelism): each tp rank sends its stage's
  // output to its peer on the next node. Megatron-LM's scatter/gather sends 1/tp of it per rank;
  // blocking sends hold the next compute until the transfer is done.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 1}, {"tp", 8}, {"pp", 2}};
  j["batch"] = {{"global", 8}, {"micro", 1}};
  j["options"]["sequence_parallel"] = false;
  auto sends = [](const traces::Timeline& tl) {
    std::vector<int64_t> bytes;
    for (const traces::Span& sp : tl.spans)
      if (sp.kind == traces::SpanKind::kSend) bytes.push_back(sp.bytes);
    return bytes;
  };
  const int64_t whole = 2048 * 1024 * 2;  // seq x hidden x bf16, one sequence per microbatch
  j["framework"] = exposed_profile("p2p-whole", R"("p2p_blocking": false)");
  const Simulation plain = simulate(parse_config(j, "cfg.json"));
  j["framework"] = exposed_profile("p2p-split", R"("p2p_scatter_gather": true)");
  const Simulation split = simulate(parse_config(j, "cfg.json"));
  j["framework"] = exposed_profile("p2p-blocking", R"("p2p_blocking": true)");
  const Simulation blocking = simulate(parse_config(j, "cfg.json"));
  ASSERT_FALSE(sends(plain.timeline).empty());
  for (int64_t b : sends(plain.timeline)) EXPECT_EQ(b, whole);
  for (int64_t b : sends(split.timeline)) EXPECT_EQ(b, whole / 8);
  EXPECT_EQ(sends(split.timeline).size(), sends(plain.timeline).size());
  // A send crosses to the next node in about 100 us (4 MiB at the NIC's 50 GB/s x 0.9, plus its
  // latency); when sends block, stage 0's compute after each send waits for it.
  EXPECT_GT(blocking.summary.step_time_s, plain.summary.step_time_s);
  // Two chunks on one rank (pp 1, interleaved): nothing crosses between them, so nothing is
  // gathered either.
  j["mesh"] = {{"dp", 1}, {"tp", 8}, {"pp", 1}};
  j["schedule"] = "interleaved";
  j["virtual_stages"] = 2;
  j["framework"] = exposed_profile("p2p-whole", R"("p2p_blocking": false)");
  const Summary one_rank = summary_of(j);
  j["framework"] = exposed_profile("p2p-split", R"("p2p_scatter_gather": true)");
  EXPECT_EQ(summary_of(j).step_time_s, one_rank.step_time_s);
}

TEST(PredictFrameworkConfig, ReceivesPostedAheadHoldSmsAcrossTheNetworkOnly) {
  // Interleaved, two chunks on each of two pp ranks (docs/ACCURACY.md item 33): with the profile's
  // p2p_recv_posted_ahead each rank posts its next receive when it has computed the chunk before,
  // and NCCL's 2 thread blocks (of the H100's 132 SMs) wait beside the compute until the data
  // arrives, so the step is longer, by less than that share of it.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 1}, {"tp", 8}, {"pp", 2}};  // tp 8 fills a node: the stages on two nodes
  j["batch"] = {{"global", 8}, {"micro", 1}};
  j["schedule"] = "interleaved";
  j["virtual_stages"] = 2;
  j["framework"] = exposed_profile("posted", R"("p2p_recv_posted_ahead": true)");
  const Simulation posted = simulate(parse_config(j, "cfg.json"));
  j["framework"] = exposed_profile("not-posted", R"("p2p_recv_posted_ahead": false)");
  const Simulation plain = simulate(parse_config(j, "cfg.json"));
  EXPECT_GT(posted.summary.step_time_s, plain.summary.step_time_s);
  EXPECT_LT(posted.summary.step_time_s, plain.summary.step_time_s * (1 + 2.0 / 132));
  ASSERT_TRUE(posted.summary.breakdown.known);
  EXPECT_GT(posted.summary.breakdown.sm_held_s, 0);
  EXPECT_EQ(plain.summary.breakdown.sm_held_s, 0);
  // Both stages in one node (tp 4): transfers over NVLink are not priced, nothing changes.
  j["mesh"] = {{"dp", 1}, {"tp", 4}, {"pp", 2}};
  const double nvlink = summary_of(j).step_time_s;
  j["framework"] = exposed_profile("posted", R"("p2p_recv_posted_ahead": true)");
  EXPECT_EQ(summary_of(j).step_time_s, nvlink);
}

}  // namespace
}  // namespace meshscope::predict
