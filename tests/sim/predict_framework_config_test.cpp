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

namespace meshscope::predict {
namespace {

using nlohmann::json;

json tiny_gpt() {
  return json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 1024, "heads": 16, "seq": 2048, "vocab": 51200},
                         "mesh": {"dp": 8}, "batch": {"global": 16, "micro": 1},
                         "cluster": {"gpu": "h100-sxm"}})");
}

using testing::error_of;

// The prediction for config `j` (read as cfg.json), without a timeline.
Summary summary_of(const json& j) {
  return simulate(parse_config(j, "cfg.json"), {.build_timeline = false}).summary;
}

// One streaming pass of `bytes` per parameter over the first stage's parameters of `c`, priced at
// the h100-sxm entry's memory rate: what a profile's per-parameter pass adds to each microbatch.
double parameter_pass_s(const PredictConfig& c, double bytes) {
  const WorkloadCosts w = workload_costs(c);
  const cost::ComputeModel compute(cost::find_hardware("h100-sxm"), c.precision);
  return compute.stream_seconds(static_cast<double>(w.dense_parameters[0]) * bytes);
}

// Writes a framework profile `name` to the test's temporary folder, with the keys `more` (each
// after a comma) besides its name and sources; returns its path.
std::string write_profile(const std::string& name, const std::string& more) {
  const std::string path = ::testing::TempDir() + "/" + name + ".json";
  std::ofstream(path) << R"({"name": ")" << name << R"(", "sources": ["test"])" << more << "}";
  return path;
}

// The same with its gradient reductions and parameter gathers exposed.
std::string exposed_profile(const std::string& name, const std::string& more) {
  return write_profile(name, R"(, "grad_reduce": "exposed", "param_gather": "exposed", )" + more);
}

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

// DeepSpeed's pipeline engine refuses ZeRO-2 and 3 (deepspeed-megatron's pipelined_zero 1): a
// pipelined config of that stack asking for more is refused naming the key, an unpipelined one is
// not, and neither what would make a config fit nor a search offers what the stack cannot run.
TEST(PredictFrameworkConfig, AStackThatStopsAtZeroOneBesidePipeliningIsNotAskedForMore) {
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["framework"] = "deepspeed-megatron";
  j["options"]["zero"] = 2;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.zero': framework 'deepspeed-megatron' runs ZeRO up to stage 1 "
            "beside pipeline parallelism (mesh.pp 2; its profile's \"pipelined_zero\"), not 2");
  j["options"]["zero"] = 1;
  EXPECT_EQ(error_of(j), "");
  j["mesh"] = {{"dp", 8}};
  j["options"]["zero"] = 3;
  EXPECT_EQ(error_of(j), "");
  j["framework"] = "megatron-core-2024";  // no limit
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  EXPECT_EQ(error_of(j), "");
  // Built in code, as a search or an alternative builds it, the same config is refused too.
  j["framework"] = "deepspeed-megatron";
  j["options"]["zero"] = 1;
  PredictConfig c = parse_config(j, "cfg.json");
  c.zero = 3;
  EXPECT_THROW(simulate(c, {.build_timeline = false}), std::invalid_argument);
  // A pipelined config too large for its GPU: the ways to fit it stop at ZeRO-1.
  j = tiny_gpt();
  j["model"]["layers"] = 24;
  j["model"]["hidden"] = 8192;
  j["model"]["heads"] = 64;
  j["model"]["seq"] = 8192;
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["batch"] = {{"global", 32}, {"micro", 4}};
  j["framework"] = "deepspeed-megatron";
  c = parse_config(j, "cfg.json");
  ASSERT_FALSE(simulate(c, {.build_timeline = false}).summary.fits);
  const FitAlternatives f = fit_alternatives(c, {});
  ASSERT_GT(f.tried, 0);
  std::vector<const FitAlternative*> offered = {&f.least_memory};
  for (const FitAlternative& a : f.fitting) offered.push_back(&a);
  for (const FitAlternative* a : offered) {
    for (const auto& [key, value] : a->changes) {
      if (key == "options.zero") {
        EXPECT_LE(std::stoi(value), 1) << value;
      }
    }
  }
}

// Two profiles alike but for pipelined_sharding (docs/ACCURACY.md item 44): beside pipeline
// parallelism, "per-step" (torch's pipelining driving FSDP2, torchtitan) gathers each stage's
// parameters once before its first forward and reduce-scatters once after its last backward,
// holding both whole (the gradients at the fp32 reduction's 4 bytes); "per-microbatch" gathers
// before every forward and backward and reduces after every backward, holding both sharded.
// Without pipelining the two are the same run.
TEST(PredictFrameworkConfig, FsdpUnderTorchPipeliningGathersAndReducesOnceAStep) {
  struct Count {
    int gathers = 0, reduces = 0;
  };
  auto dp_collectives = [](const schedule::Schedule& s, int rank, int stage) {
    Count n;
    for (const schedule::Action& a : s.ranks.at(rank)) {
      if (a.group != mesh::GroupKind::kDp || a.stage != stage) continue;
      n.gathers += a.kind == schedule::ActionKind::kAllGather;
      n.reduces += a.kind == schedule::ActionKind::kReduceScatter;
    }
    return n;
  };
  json j = tiny_gpt();  // 4 layers
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["batch"] = {{"global", 32}, {"micro", 1}};  // 8 microbatches a replica
  j["options"]["zero"] = 3;
  const std::string more = R"(, "grad_reduce_bytes": 4, "grad_reduce": "exposed")";
  for (const std::string schedule : {"1f1b", "interleaved"}) {
    j["schedule"] = schedule;
    j["framework"] = write_profile("sharded-per-microbatch", more);
    const PredictConfig pc = parse_config(j, "cfg.json");
    const Simulation per_mb = simulate(pc, {.build_timeline = false});
    j["framework"] =
        write_profile("sharded-per-step", more + R"(, "pipelined_sharding": "per-step")");
    const Simulation per_step = simulate(parse_config(j, "cfg.json"), {.build_timeline = false});
    const int m = per_mb.summary.microbatches;
    ASSERT_EQ(m, 8);
    const int v = schedule == "1f1b" ? 1 : 2;
    for (int rank = 0; rank < 2; ++rank) {
      for (int k = 0; k < v; ++k) {
        const int stage = rank + 2 * k;  // interleaved: stage s on pp rank s mod pp
        const Count a = dp_collectives(per_mb.schedule, rank, stage);
        const Count b = dp_collectives(per_step.schedule, rank, stage);
        EXPECT_EQ(a.gathers, 2 * m) << schedule << " stage " << stage;
        EXPECT_EQ(a.reduces, m) << schedule << " stage " << stage;
        EXPECT_EQ(b.gathers, 1) << schedule << " stage " << stage;
        EXPECT_EQ(b.reduces, 1) << schedule << " stage " << stage;
      }
    }
    // Fewer collectives waited for; the states held whole, the gradients in fp32.
    EXPECT_LT(per_step.summary.step_time_s, per_mb.summary.step_time_s) << schedule;
    const DeviceMemory& sharded = per_mb.summary.memory[0];
    const DeviceMemory& whole = per_step.summary.memory[0];
    EXPECT_NEAR(static_cast<double>(whole.parameters_bytes), 4.0 * sharded.parameters_bytes, 4);
    EXPECT_NEAR(static_cast<double>(whole.gradients_bytes), 2 * 4.0 * sharded.gradients_bytes, 8);
    EXPECT_EQ(whole.optimizer_bytes, sharded.optimizer_bytes);
  }
  // Without pipelining both gather and reduce around every microbatch: the same prediction.
  j["schedule"] = "1f1b";
  j["mesh"] = {{"dp", 8}};
  j["framework"] = write_profile("sharded-per-microbatch", more);
  const Summary a = summary_of(j);
  j["framework"] =
      write_profile("sharded-per-step", more + R"(, "pipelined_sharding": "per-step")");
  const Summary b = summary_of(j);
  EXPECT_DOUBLE_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
  // The key's refusal names it.
  j["framework"] = write_profile("sharded-wrong", R"(, "pipelined_sharding": "per-layer")");
  EXPECT_NE(error_of(j).find("key 'pipelined_sharding': must be \"per-step\" or"),
            std::string::npos)
      << error_of(j);
}

TEST(PredictFrameworkConfig, AProfilesGradientBytesAreHeldAndShardedLikeTheGradients) {
  // A profile that keeps fp32 gradients under bf16 holds 4 bytes a parameter where ZeRO's
  // accounting holds 2, sharded from ZeRO-2 on like any gradient; the step time does not move,
  // and an fp16 run of the same profile keeps its element size.
  json j = tiny_gpt();
  j["framework"] = write_profile("grads-as-run", "");
  const Summary plain = summary_of(j);
  j["framework"] = write_profile("fp32-main-grads", R"(, "gradient_bytes": {"bf16": 4})");
  const Summary fp32 = summary_of(j);
  ASSERT_EQ(fp32.memory.size(), 1u);
  EXPECT_EQ(fp32.memory[0].gradients_bytes, 2 * plain.memory[0].gradients_bytes);
  EXPECT_EQ(fp32.peak_memory_bytes - plain.peak_memory_bytes, plain.memory[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(fp32.step_time_s, plain.step_time_s);
  j["options"]["zero"] = 2;
  const Summary sharded = summary_of(j);
  EXPECT_NEAR(static_cast<double>(sharded.memory[0].gradients_bytes),
              fp32.memory[0].gradients_bytes / 8.0, 1.0);
  j["options"]["zero"] = 0;
  j["options"]["precision"] = "fp16";
  const Summary fp16 = summary_of(j);
  EXPECT_EQ(fp16.memory[0].gradients_bytes, plain.memory[0].gradients_bytes);
}

TEST(PredictFrameworkConfig, AGradReduceDtypeSetsWhatTheReductionsMoveAndWhereReducedWhatIsKept) {
  // options.grad_reduce_dtype over the profile's grad_reduce_bytes (docs/ACCURACY.md item 45): an
  // fp32 reduction moves twice a bf16 one's bytes, as a profile saying {"bf16": 4} does; the
  // gradients held follow it only where the profile keeps them in the reduced buffer.
  json j = tiny_gpt();
  j["framework"] = write_profile("reduce-as-run", "");
  const Summary plain = summary_of(j);
  j["options"]["grad_reduce_dtype"] = "fp32";
  const Summary fp32 = summary_of(j);
  EXPECT_GT(fp32.step_time_s, plain.step_time_s);  // the exposed all-reduce moves 4 bytes
  EXPECT_EQ(fp32.memory[0].gradients_bytes, plain.memory[0].gradients_bytes);
  j["options"].erase("grad_reduce_dtype");
  j["framework"] = write_profile("reduce-in-fp32", R"(, "grad_reduce_bytes": {"bf16": 4})");
  EXPECT_DOUBLE_EQ(summary_of(j).step_time_s, fp32.step_time_s);
  j["options"]["grad_reduce_dtype"] = "bf16";  // the run's own type over the profile's
  EXPECT_DOUBLE_EQ(summary_of(j).step_time_s, plain.step_time_s);
  // Kept in the reduced buffer: 4 bytes a parameter under fp32, 2 under bf16.
  j["framework"] = write_profile(
      "kept-as-reduced", R"(, "grad_reduce_bytes": {"bf16": 4}, "gradient_bytes": "reduced")");
  j["options"].erase("grad_reduce_dtype");
  const Summary kept = summary_of(j);
  EXPECT_EQ(kept.memory[0].gradients_bytes, 2 * plain.memory[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(kept.step_time_s, fp32.step_time_s);
  j["options"]["grad_reduce_dtype"] = "bf16";
  EXPECT_EQ(summary_of(j).memory[0].gradients_bytes, plain.memory[0].gradients_bytes);
  j["options"]["grad_reduce_dtype"] = "tf32";
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.grad_reduce_dtype': 'tf32' is not one of bf16, fp16, fp32");
}

TEST(PredictFrameworkConfig, ContextParallelDevicesShareTheShardsAndTheReductions) {
  // With cp 2 the dp x cp devices reduce the gradients together and ZeRO shards the states over
  // all of them (docs/ACCURACY.md item 46): half the optimizer state of the dp-only sharding.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 4}, {"cp", 2}};
  j["options"]["zero"] = 1;
  const PredictConfig c = parse_config(j, "cfg.json");
  EXPECT_EQ(c.zero_shards(), 8);
  const Summary cp = summary_of(j);
  j["mesh"] = {{"dp", 4}};
  const Summary dp = summary_of(j);
  ASSERT_EQ(cp.memory.size(), 1u);
  EXPECT_NEAR(static_cast<double>(cp.memory[0].optimizer_bytes), dp.memory[0].optimizer_bytes / 2.0,
              1.0);
  EXPECT_EQ(cp.memory[0].gradients_bytes, dp.memory[0].gradients_bytes);
  // Without a second dp rank the cp devices still reduce their gradients together.
  j["mesh"] = {{"dp", 1}, {"cp", 2}};
  EXPECT_GT(summary_of(j).breakdown.dp_collectives_wire_s, 0);
  j["mesh"] = {{"dp", 1}};
  EXPECT_EQ(summary_of(j).breakdown.dp_collectives_wire_s, 0);
}

TEST(PredictFrameworkConfig, AnOptimizerStateBytesIsWhatTheStatesHoldShardedAsBefore) {
  // options.optimizer_state_bytes (docs/ACCURACY.md item 47): NeMo's distributed_fused_adam keeps
  // 16-bit remainders and fp32 moments (10) or bf16 moments (4) where ZeRO's accounting holds 12;
  // memory only, sharded over dp under ZeRO-1 as before.
  json j = tiny_gpt();
  j["options"]["zero"] = 1;
  const Summary adam = summary_of(j);
  j["options"]["optimizer_state_bytes"] = 4;
  const Summary bf16 = summary_of(j);
  ASSERT_EQ(bf16.memory.size(), 1u);
  EXPECT_NEAR(static_cast<double>(bf16.memory[0].optimizer_bytes),
              adam.memory[0].optimizer_bytes / 3.0, 1.0);
  EXPECT_EQ(bf16.memory[0].gradients_bytes, adam.memory[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(bf16.step_time_s, adam.step_time_s);
  // --breakdown and --json say what each state holds a parameter, and over how many devices.
  EXPECT_DOUBLE_EQ(adam.state_bytes.optimizer, 12);
  EXPECT_DOUBLE_EQ(bf16.state_bytes.optimizer, 4);
  EXPECT_EQ(bf16.optimizer_shards, 8);
  EXPECT_EQ(bf16.gradient_shards, 1);
  EXPECT_EQ(bf16.parameter_shards, 1);
  j["options"]["optimizer_state_bytes"] = 65;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.optimizer_state_bytes': must be an integer in [0, 64] (bytes a "
            "parameter)");
}

TEST(PredictFrameworkConfig, AnUnfusedOptimizerStepCostsItsBytesOnTheShardOnceAStep) {
  // Two profiles alike but for optimizer_step_bytes: the step differs by the extra bytes over the
  // parameters each GPU updates (its 1/dp shard under ZeRO >= 1), once per step, at the memory
  // rate; an SGD config is unaffected.
  const auto& profile = write_profile;
  json j = tiny_gpt();
  j["options"]["zero"] = 1;
  j["framework"] = profile("fused-adam", "");
  const PredictConfig plain = parse_config(j, "cfg.json");
  const Summary fused = simulate(plain, {.build_timeline = false}).summary;
  j["framework"] = profile("unfused-adam", R"(, "optimizer_step_bytes": 96)");
  const Summary unfused = summary_of(j);
  const WorkloadCosts w = workload_costs(plain);
  const cost::ComputeModel compute(cost::find_hardware("h100-sxm"), plain.precision);
  const double shard = static_cast<double>(w.dense_parameters[0]) / 8;
  EXPECT_NEAR(unfused.step_time_s - fused.step_time_s, compute.stream_seconds(shard * (96 - 28)),
              1e-7);
  EXPECT_GT(unfused.step_time_s, fused.step_time_s);
  j["options"]["optimizer"] = "sgd";
  const Summary sgd = summary_of(j);
  j["framework"] = profile("fused-adam", "");
  EXPECT_DOUBLE_EQ(sgd.step_time_s, summary_of(j).step_time_s);
  // Given by precision, a run pays its own precision's figure: the fp16 entry costs an fp16 run
  // its bytes and leaves a bf16 run at the fused pass.
  j["options"]["optimizer"] = "adam";
  j["framework"] = profile("adam-by-precision", R"(, "optimizer_step_bytes": {"fp16": 96})");
  EXPECT_DOUBLE_EQ(summary_of(j).step_time_s, fused.step_time_s);  // tiny_gpt runs bf16
  j["options"]["precision"] = "fp16";
  const Summary fp16_by = summary_of(j);
  j["framework"] = profile("fused-adam", "");
  const Summary fp16_fused = summary_of(j);
  EXPECT_NEAR(fp16_by.step_time_s - fp16_fused.step_time_s,
              compute.stream_seconds(shard * (96 - 28)), 1e-7);
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
