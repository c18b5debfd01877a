// Framework profiles (sim/cost/frameworks/*.json): every shipped profile loads, states its
// sources, and bad profiles are refused with the key named.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"

namespace meshscope::cost {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    parse_framework(j, "fw.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The three ways a pair of byte counts (byte_pair in framework.cpp) is refused, each naming the
// key: a count out of [0, 64] (`bad` for `first`), an unknown inner key, a value that is no object.
void expect_byte_pair_refused(const std::string& key, const std::string& first, double bad,
                              const std::string& unit) {
  const nlohmann::json out_of_range = {{"name", "x"}, {key, {{first, bad}}}};
  EXPECT_NE(error_of(out_of_range)
                .find("fw.json: key '" + key + "." + first + "': must be a number of bytes per " +
                      unit + " in [0, 64]"),
            std::string::npos)
      << error_of(out_of_range);
  const nlohmann::json unknown = {{"name", "x"}, {key, {{"bogus", 2}}}};
  EXPECT_NE(error_of(unknown).find("key '" + key + ".bogus': unknown key"), std::string::npos)
      << error_of(unknown);
  const nlohmann::json not_an_object = {{"name", "x"}, {key, 3}};
  EXPECT_NE(error_of(not_an_object).find("fw.json: key '" + key + "': must be {"),
            std::string::npos)
      << error_of(not_an_object);
}

TEST(CostFramework, EveryShippedProfileLoadsAndCitesItsSources) {
  const auto names = list_frameworks();
  ASSERT_GE(names.size(), 5u);
  for (const std::string& n : names) {
    const Framework f = find_framework(n);
    EXPECT_EQ(f.name, n);
    EXPECT_FALSE(f.sources.empty()) << n;
  }
  EXPECT_NE(std::find(names.begin(), names.end(), std::string(kDefaultFramework)), names.end());
}

TEST(CostFramework, BadProfilesNameTheKey) {
  EXPECT_NE(
      error_of({{"name", "x"}, {"grad_reduce", "sometimes"}}).find("fw.json: key 'grad_reduce'"),
      std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"flash_attention", "unfused"}}).find("key 'flash_attention'"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"fused", true}}).find("key 'fused': unknown key"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"elementwise_passes", {{"norm", -1}}}})
                .find("elementwise_passes.norm"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"name", "x"}, {"elementwise_backward_passes", {{"norm", 101}}}})
          .find("fw.json: key 'elementwise_backward_passes.norm': must be a number in [0, 100]"),
      std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"elementwise_backward_passes", {{"layernorm", 5}}}})
                .find("key 'elementwise_backward_passes.layernorm': unknown key"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"},
                      {"residuals", {{"a100-80gb", {{"low", 0.2}, {"high", 0.1}, {"rows", 2}}}}}})
                .find("residuals.a100-80gb"),
            std::string::npos);
  // A misspelt key inside a range, a count beyond an int, a description that is no string.
  EXPECT_NE(error_of({{"name", "x"},
                      {"residuals",
                       {{"a100-80gb", {{"low", 0.1}, {"high", 0.2}, {"rows", 2}, {"lo", 0}}}}}})
                .find("key 'residuals.a100-80gb': must be {"),
            std::string::npos);
  EXPECT_NE(
      error_of({{"name", "x"},
                {"residuals",
                 {{"a100-80gb", {{"low", 0.1}, {"high", 0.2}, {"rows", int64_t{10000000000}}}}}}})
          .find("key 'residuals.a100-80gb.rows': must be in [1, 1000000]"),
      std::string::npos);
  // max_seq, the longest sequence behind a range, is optional and a positive integer.
  EXPECT_EQ(parse_framework(
                {{"name", "x"},
                 {"residuals",
                  {{"a100-80gb", {{"low", 0.1}, {"high", 0.2}, {"rows", 2}, {"max_seq", 8192}}}}}},
                "fw.json")
                .residuals.at("a100-80gb")
                .max_seq,
            8192);
  EXPECT_NE(
      error_of({{"name", "x"},
                {"residuals",
                 {{"a100-80gb", {{"low", 0.1}, {"high", 0.2}, {"rows", 2}, {"max_seq", 0}}}}}})
          .find("key 'residuals.a100-80gb.max_seq': must be in [1, 1000000000]"),
      std::string::npos);
  EXPECT_NE(
      error_of({{"name", "x"},
                {"residuals",
                 {{"a100-80gb", {{"low", 0.1}, {"high", 0.2}, {"rows", 2}, {"max_seq", 1.5}}}}}})
          .find("key 'residuals.a100-80gb': must be {"),
      std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"description", 5}}).find("fw.json: key 'description'"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::object()).find("key 'name'"), std::string::npos);
  try {
    find_framework("no-such-framework");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown framework 'no-such-framework'"),
              std::string::npos)
        << e.what();
  }
}

TEST(CostFramework, FlashAttention3FallsBackToFlashAttention2WithoutHopper) {
  const Hardware a100 = find_hardware("a100-80gb"), h100 = find_hardware("h100-sxm");
  EXPECT_DOUBLE_EQ(attention_efficiency(a100, AttentionKernel::kFlash3),
                   a100.efficiency.attention_flash2);
  EXPECT_DOUBLE_EQ(attention_efficiency(h100, AttentionKernel::kFlash3),
                   h100.efficiency.attention_flash3);
  EXPECT_LT(attention_efficiency(h100, AttentionKernel::kFlash2),
            attention_efficiency(h100, AttentionKernel::kFlash3));
}

TEST(CostFramework, FlashAttentionOneRunsAtHalfFlashAttentionTwosRate) {
  // Dao 2023 (FlashAttention-2), abstract: FA2 is about 2x faster than FlashAttention.
  for (const char* gpu : {"a100-80gb", "h100-sxm"}) {
    const Hardware hw = find_hardware(gpu);
    EXPECT_DOUBLE_EQ(attention_efficiency(hw, AttentionKernel::kFlash1),
                     0.5 * attention_efficiency(hw, AttentionKernel::kFlash2))
        << gpu;
  }
  EXPECT_EQ(find_framework("llm-foundry").flash, AttentionKernel::kFlash1);
}

TEST(CostFramework, AForwardFasterThanItsBackwardKeepsTheCombinedRate) {
  // attention_forward_speedup s splits the kernel's combined rate c into a forward f and a
  // backward b = f / s such that a forward and its backward (1 + 2.5 FLOPs) take as long as at c.
  const Hardware hw = find_hardware("a100-80gb");
  const double c = attention_efficiency(hw, AttentionKernel::kFlash1);
  const AttentionRates same = attention_rates(hw, AttentionKernel::kFlash1, 1);
  EXPECT_DOUBLE_EQ(same.forward, c);
  EXPECT_DOUBLE_EQ(same.backward, c);
  const double s = find_framework("llm-foundry").attention_forward_speedup;
  EXPECT_DOUBLE_EQ(s, 1.48);  // Triton's 0.37 forward over 0.25 backward on the A100
  const AttentionRates split = attention_rates(hw, AttentionKernel::kFlash1, s);
  EXPECT_NEAR(split.forward / split.backward, s, 1e-12);
  EXPECT_NEAR(1 / split.forward + 2.5 / split.backward, 3.5 / c, 1e-9);
  // On the A100 the split lands on Triton's own figures for the kernel family.
  EXPECT_NEAR(split.forward, 0.37, 0.002);
  EXPECT_NEAR(split.backward, 0.25, 0.002);
  EXPECT_DOUBLE_EQ(parse_framework({{"name", "x"}}, "fw.json").attention_forward_speedup, 1);
  for (const nlohmann::json& bad : {nlohmann::json(0.1), nlohmann::json(5), nlohmann::json("2")})
    EXPECT_EQ(error_of({{"name", "x"}, {"attention_forward_speedup", bad}}),
              "fw.json: key 'attention_forward_speedup': must be a number in [0.25, 4]: the "
              "forward's fraction of peak over the backward's")
        << bad.dump();
}

TEST(CostFramework, AttentionKernelsComputeAtTheHeadDimensionTheyWereCompiledFor) {
  // {head dimension, flash1, flash2, flash3}: the kernels' own dispatch tables
  // (flash_attn_triton.py, static_switch.h HEADDIM_SWITCH, hopper/flash_api.cpp run_mha_fwd).
  struct Case {
    int64_t d, flash1, flash2, flash3;
  };
  for (const Case& c :
       {Case{16, 16, 32, 64}, Case{64, 64, 64, 64}, Case{80, 128, 96, 96}, Case{96, 128, 96, 96},
        Case{112, 128, 128, 128}, Case{128, 128, 128, 128}, Case{160, 160, 160, 192},
        Case{224, 224, 256, 256}, Case{320, 320, 320, 320}}) {
    SCOPED_TRACE(c.d);
    EXPECT_EQ(kernel_head_dim(AttentionKernel::kFlash1, c.d), c.flash1);
    EXPECT_EQ(kernel_head_dim(AttentionKernel::kFlash2, c.d), c.flash2);
    EXPECT_EQ(kernel_head_dim(AttentionKernel::kFlash3, c.d), c.flash3);
    EXPECT_EQ(kernel_head_dim(AttentionKernel::kUnfused, c.d), c.d);
  }
}

TEST(CostFramework, GradientReductionBytesAreFp32OrHalfAndNamedWhenWrong) {
  // Composer 0.15-0.16.3's DEFAULT leaves the reduce dtype unset; torch 2.0.1's FSDP then reduces
  // in the parameters' bf16 (docs/ACCURACY.md item 57).
  EXPECT_DOUBLE_EQ(find_framework("llm-foundry").grad_reduce_bytes.all, 2);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").grad_reduce_bytes.all,
                   4);  // mixed_precision_reduce
  // Megatron-LM all-reduces its fp32 main gradients under bf16, its fp16 ones under fp16.
  for (const char* megatron : {"megatron-2021", "megatron-2022"}) {
    EXPECT_DOUBLE_EQ(find_framework(megatron).grad_reduce_bytes.at(Precision::kBf16), 4);
    EXPECT_DOUBLE_EQ(find_framework(megatron).grad_reduce_bytes.at(Precision::kFp16), 0);
  }
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").grad_reduce_bytes.at(Precision::kFp16), 4);
  EXPECT_NE(
      error_of({{"name", "x"}, {"grad_reduce_bytes", 3}}).find("fw.json: key 'grad_reduce_bytes'"),
      std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"grad_reduce_bytes", {{"bf16", 8}}}})
                .find("fw.json: key 'grad_reduce_bytes.bf16': must be 2 (bf16/fp16) or 4"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"grad_reduce_bytes", {{"int8", 2}}}})
                .find("key 'grad_reduce_bytes.int8': unknown key"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"recompute", {"sometimes"}}}).find("key 'recompute'"),
            std::string::npos);
  EXPECT_EQ(error_of({{"name", "x"}, {"recompute", {"none", "op-selective"}}}), "");
}

TEST(CostFramework, ShardedCopiesAreBytesPerParameterAndNamedWhenWrong) {
  // FSDP (FlatParameter) reducing in bf16 (llm-foundry, item 57): no copy-out after the gather;
  // gradient cat 4 + bf16 pre-divide 4, no cast. FSDP2: copy-out 4 per gather; copy-in with the
  // fp32 cast 6, no pre-divide.
  EXPECT_DOUBLE_EQ(find_framework("llm-foundry").gather_copy_bytes, 0);
  EXPECT_DOUBLE_EQ(find_framework("llm-foundry").reduce_copy_bytes, 8);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").gather_copy_bytes, 4);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").reduce_copy_bytes, 6);
  EXPECT_DOUBLE_EQ(find_framework("megatron-core-2024").reduce_copy_bytes, 0);
  // fms-fsdp: FlatParameter with a bf16 reduce dtype: the cat 4 and a bf16 pre-divide 4, no cast.
  EXPECT_DOUBLE_EQ(find_framework("fms-fsdp").gather_copy_bytes, 0);
  EXPECT_DOUBLE_EQ(find_framework("fms-fsdp").reduce_copy_bytes, 4 + 4);
  EXPECT_DOUBLE_EQ(find_framework("fms-fsdp").grad_reduce_bytes.all, 2);
  expect_byte_pair_refused("sharded_copies", "gather", -1, "parameter");
}

TEST(CostFramework, WeightCastsAreBytesPerParameterAndNamedWhenWrong) {
  const Framework f = parse_framework(
      {{"name", "x"}, {"weight_casts", {{"forward", 6}, {"backward", 18}}}}, "fw.json");
  EXPECT_EQ(f.cast_forward_bytes, 6);
  EXPECT_EQ(f.cast_backward_bytes, 18);
  EXPECT_EQ(parse_framework({{"name", "x"}}, "fw.json").cast_forward_bytes, 0);
  expect_byte_pair_refused("weight_casts", "forward", 65, "parameter");
}

TEST(CostFramework, GradAccumulationIsBytesPerParameterByPrecisionAndNamedWhenWrong) {
  const Framework f = parse_framework(
      {{"name", "x"}, {"grad_accumulation", {{"bf16", 18}, {"fp32", 12}}}}, "fw.json");
  EXPECT_EQ(f.grad_accumulation.at(Precision::kBf16), 18);
  EXPECT_EQ(f.grad_accumulation.at(Precision::kFp16), 0);  // not given: no pass
  EXPECT_EQ(f.grad_accumulation.at(Precision::kFp32), 12);
  EXPECT_EQ(f.grad_accumulation.at(Precision::kTf32), 12);  // tf32 runs keep fp32 gradients
  EXPECT_EQ(parse_framework({{"name", "x"}}, "fw.json").grad_accumulation.at(Precision::kBf16), 0);
  // DeepSpeed's bf16 optimizer casts each microbatch's bf16 gradient to fp32 (2 + 4) and adds it
  // into the fp32 one (4 + 4 + 4); under fp16 autograd adds it into the fp16 one in place (2 + 2
  // + 2); Megatron fuses its accumulation into the GEMM.
  EXPECT_DOUBLE_EQ(find_framework("deepspeed-megatron").grad_accumulation.at(Precision::kBf16),
                   2 + 4 + 4 + 4 + 4);
  EXPECT_DOUBLE_EQ(find_framework("deepspeed-megatron").grad_accumulation.at(Precision::kFp16),
                   2 + 2 + 2);
  EXPECT_DOUBLE_EQ(find_framework("megatron-core-2024").grad_accumulation.at(Precision::kBf16), 0);
  auto refused = [](const nlohmann::json& value) {
    return error_of({{"name", "x"}, {"grad_accumulation", value}});
  };
  EXPECT_NE(refused({{"bf16", 65}})
                .find("fw.json: key 'grad_accumulation.bf16': must be a number of "
                      "bytes per parameter in [0, 64]"),
            std::string::npos);
  EXPECT_NE(refused({{"bf16", "18"}}).find("key 'grad_accumulation.bf16'"), std::string::npos);
  EXPECT_NE(refused({{"tf32", 4}}).find("key 'grad_accumulation.tf32': unknown key"),
            std::string::npos)
      << refused({{"tf32", 4}});
  EXPECT_NE(refused(18).find("fw.json: key 'grad_accumulation': must be {"), std::string::npos);
}

TEST(CostFramework, Megatron2021IsMegatron2022LessWhatCameIn2022) {
  // The 2021 profile shares every figure with megatron-2022 but for: a hook adding each
  // microbatch's gradient into main_grad (no gradient_accumulation_fusion: bf16 2 + 4 + 4, fp16
  // 2 + 2 + 2), the non-persistent layer norm's backward (5), no async tp all-reduce in the
  // backward (an assumption) and no selective recomputation.
  const Framework old = find_framework("megatron-2021");
  const Framework later = find_framework("megatron-2022");
  EXPECT_DOUBLE_EQ(old.grad_accumulation.at(Precision::kBf16), 2 + 4 + 4);
  EXPECT_DOUBLE_EQ(old.grad_accumulation.at(Precision::kFp16), 2 + 2 + 2);
  EXPECT_DOUBLE_EQ(later.grad_accumulation.at(Precision::kBf16), 0);
  EXPECT_DOUBLE_EQ(old.passes.norm_grad, 5);
  EXPECT_LT(later.passes.norm_grad, 0);  // the rule's (3 for the norm)
  EXPECT_FALSE(old.tp_backward_overlap);
  EXPECT_TRUE(later.tp_backward_overlap);
  EXPECT_EQ(old.recompute, (std::vector<std::string>{"none", "full"}));
  EXPECT_FALSE(old.has_sequence_parallel);
  EXPECT_FALSE(old.has_flash_attention);
  EXPECT_TRUE(later.has_sequence_parallel);
  EXPECT_TRUE(later.has_flash_attention);
  EXPECT_NE(error_of({{"name", "x"}, {"lacks", {"pipelines"}}})
                .find("fw.json: key 'lacks': must be a list of sequence_parallel, flash_attention, "
                      "tensor_parallel, pipeline_parallel, context_parallel"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"lacks", "flash_attention"}}).find("key 'lacks'"),
            std::string::npos);
  // What they share.
  EXPECT_EQ(old.softmax, later.softmax);
  EXPECT_EQ(old.passes.norm, later.passes.norm);
  EXPECT_EQ(old.passes.activation, later.passes.activation);
  EXPECT_EQ(old.passes.residual, later.passes.residual);
  EXPECT_EQ(old.grad_reduce, later.grad_reduce);
  EXPECT_EQ(old.param_gather, later.param_gather);
  EXPECT_EQ(old.p2p_scatter_gather, later.p2p_scatter_gather);
  EXPECT_EQ(old.p2p_blocking, later.p2p_blocking);
  EXPECT_EQ(old.qkv_split_grad, later.qkv_split_grad);
  EXPECT_EQ(old.attention_dropout, later.attention_dropout);
  for (const Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp32}) {
    EXPECT_DOUBLE_EQ(old.optimizer_step_bytes.at(p), later.optimizer_step_bytes.at(p));
    EXPECT_DOUBLE_EQ(old.gradient_bytes.at(p), later.gradient_bytes.at(p));
  }
  EXPECT_DOUBLE_EQ(old.loss_forward_bytes, later.loss_forward_bytes);
  EXPECT_DOUBLE_EQ(old.loss_backward_bytes, later.loss_backward_bytes);
  EXPECT_DOUBLE_EQ(old.loss_saved_bytes, later.loss_saved_bytes);
}

TEST(CostFramework, OptimizerStepBytesCountTheUnfusedAdamPassesAndClipping) {
  // Composer's DecoupledAdamW and torch's foreach AdamW make 21 fp32 accesses per parameter (84
  // bytes); gradient clipping reads each gradient for its norm and scales it (12). Megatron-LM
  // 2022 zeroes its fp32 gradient buffer (4), takes the norm (4), runs apex's fused Adam (28) and
  // copies the fp32 weights into the bf16 ones (6); under fp16 it zeroes an fp16 buffer (2),
  // copies it to fp32 (2 + 4) and unscales that (4 + 4) before the same norm, Adam and copy
  // (item 41). Profiles that do not say keep one fused pass (0: the simulator's 28).
  EXPECT_DOUBLE_EQ(find_framework("llm-foundry").optimizer_step_bytes.all, 84 + 12);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").optimizer_step_bytes.all, 84 + 12);
  const Framework megatron = find_framework("megatron-2022");
  EXPECT_DOUBLE_EQ(megatron.optimizer_step_bytes.at(Precision::kBf16), 4 + 4 + 28 + 6);
  EXPECT_DOUBLE_EQ(megatron.optimizer_step_bytes.at(Precision::kFp16), 2 + 6 + 8 + 4 + 28 + 6);
  EXPECT_DOUBLE_EQ(megatron.optimizer_step_bytes.at(Precision::kFp32), 0);  // not given: 28
  EXPECT_DOUBLE_EQ(find_framework("megatron-core-2024").optimizer_step_bytes.all, 0);
  // A number applies to every precision; an object's precisions not given take the number.
  const Framework one = parse_framework({{"name", "x"}, {"optimizer_step_bytes", 96}}, "fw.json");
  EXPECT_DOUBLE_EQ(one.optimizer_step_bytes.at(Precision::kFp16), 96);
  const Framework by =
      parse_framework({{"name", "x"}, {"optimizer_step_bytes", {{"fp16", 54}}}}, "fw.json");
  EXPECT_DOUBLE_EQ(by.optimizer_step_bytes.at(Precision::kFp16), 54);
  EXPECT_DOUBLE_EQ(by.optimizer_step_bytes.at(Precision::kBf16), 0);
  EXPECT_EQ(error_of({{"name", "x"}, {"optimizer_step_bytes", {{"fp16", 4}}}}),
            "fw.json: key 'optimizer_step_bytes.fp16': must be a number of bytes per parameter "
            "in [12, 256]");
  EXPECT_NE(error_of({{"name", "x"}, {"optimizer_step_bytes", {{"int8", 40}}}})
                .find("optimizer_step_bytes.int8"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"optimizer_step_bytes", 4}})
                .find("fw.json: key 'optimizer_step_bytes': must be a number of bytes"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"optimizer_step_bytes", "many"}})
                .find("key 'optimizer_step_bytes'"),
            std::string::npos);
}

TEST(CostFramework, GradientBytesAreWhatEachStackKeepsThroughTheStep) {
  // Megatron-LM keeps fp32 main gradients under bf16; DeepSpeed's BF16_Optimizer keeps the bf16
  // gradients and a whole fp32 copy; every other profile the element size (0), as do both under
  // fp16 (item 42).
  for (const char* name : {"megatron-2021", "megatron-2022"}) {
    EXPECT_DOUBLE_EQ(find_framework(name).gradient_bytes.at(Precision::kBf16), 4) << name;
    EXPECT_DOUBLE_EQ(find_framework(name).gradient_bytes.at(Precision::kFp16), 0) << name;
  }
  EXPECT_DOUBLE_EQ(find_framework("deepspeed-megatron").gradient_bytes.at(Precision::kBf16), 6);
  EXPECT_DOUBLE_EQ(find_framework("deepspeed-megatron").gradient_bytes.at(Precision::kFp16), 0);
  for (const char* name : {"megatron-core-2024", "nemo-24.09", "torchtitan", "llama3-2024"})
    EXPECT_DOUBLE_EQ(find_framework(name).gradient_bytes.at(Precision::kBf16), 0) << name;
  // megatron-core's and NeMo's gradients live in the buffer their collective reduces, in fp32
  // under bf16 unless the run says otherwise (item 45); the other stacks keep their own.
  for (const std::string& n : list_frameworks()) {
    const Framework f = find_framework(n);
    const bool reduced = n == "megatron-core-2024" || n == "nemo-24.09";
    EXPECT_EQ(f.gradients_in_reduce_dtype, reduced) << n;
    if (reduced) {
      EXPECT_DOUBLE_EQ(f.grad_reduce_bytes.at(Precision::kBf16), 4) << n;
      EXPECT_DOUBLE_EQ(f.grad_reduce_bytes.at(Precision::kFp16), 0) << n;
    }
  }
  EXPECT_TRUE(parse_framework({{"name", "x"}, {"gradient_bytes", "reduced"}}, "fw.json")
                  .gradients_in_reduce_dtype);
  EXPECT_EQ(error_of({{"name", "x"}, {"gradient_bytes", "fp32"}}),
            "fw.json: key 'gradient_bytes': must be \"reduced\" (kept in the type they are reduced "
            "in), a number of bytes per parameter in [1, 32], or {\"bf16\", \"fp16\", \"fp32\"} of "
            "those");
  EXPECT_DOUBLE_EQ(parse_framework({{"name", "x"}, {"gradient_bytes", 4}}, "fw.json")
                       .gradient_bytes.at(Precision::kFp16),
                   4);
  EXPECT_EQ(error_of({{"name", "x"}, {"gradient_bytes", 0}}),
            "fw.json: key 'gradient_bytes': must be a number of bytes per parameter in [1, 32], "
            "or {\"bf16\", \"fp16\", \"fp32\"} of those");
  EXPECT_EQ(
      error_of({{"name", "x"}, {"gradient_bytes", {{"bf16", 64}}}}),
      "fw.json: key 'gradient_bytes.bf16': must be a number of bytes per parameter in [1, 32]");
}

TEST(CostFramework, PipelineTransfersFollowTheFrameworksP2pCode) {
  // Megatron-LM 2022 and DeepSpeed split a stage's tensor over tp and block on their sends;
  // megatron-core sends whole tensors and overlaps them; FSDP stacks have no pipeline p2p of
  // their own and keep the defaults (whole, beside the compute).
  EXPECT_TRUE(find_framework("megatron-2022").p2p_scatter_gather);
  EXPECT_TRUE(find_framework("megatron-2022").p2p_blocking);
  EXPECT_TRUE(find_framework("deepspeed-megatron").p2p_scatter_gather);
  EXPECT_TRUE(find_framework("deepspeed-megatron").p2p_blocking);
  EXPECT_FALSE(find_framework("megatron-core-2024").p2p_scatter_gather);
  EXPECT_FALSE(find_framework("megatron-core-2024").p2p_blocking);
  EXPECT_FALSE(find_framework("torchtitan").p2p_blocking);
  // Megatron-LM's column-parallel backward (its own layers and Transformer Engine's) runs the
  // input-gradient collective beside the weight-gradient GEMM; the others run it alone.
  EXPECT_TRUE(find_framework("megatron-2022").tp_backward_overlap);
  EXPECT_TRUE(find_framework("megatron-core-2024").tp_backward_overlap);
  EXPECT_FALSE(find_framework("llama3-2024").tp_backward_overlap);
  EXPECT_FALSE(find_framework("torchtitan").tp_backward_overlap);
  EXPECT_NE(error_of({{"name", "x"}, {"tp_backward_overlap", 1}})
                .find("fw.json: key 'tp_backward_overlap': must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"p2p_blocking", "yes"}})
                .find("fw.json: key 'p2p_blocking': must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"p2p_scatter_gather", 1}})
                .find("fw.json: key 'p2p_scatter_gather': must be true or false"),
            std::string::npos);
}

TEST(CostFramework, PipelinedZeroIsTheHighestStageAStackRunsBesidePipelining) {
  // DeepSpeed's PipelineEngine asserts ZeRO below stage 2; the other stacks name no limit.
  for (const std::string& n : list_frameworks())
    EXPECT_EQ(find_framework(n).pipelined_zero, n == "deepspeed-megatron" ? 1 : 3) << n;
  for (const nlohmann::json& bad :
       {nlohmann::json(4), nlohmann::json(-1), nlohmann::json("1"), nlohmann::json(1.5)}) {
    EXPECT_NE(error_of({{"name", "x"}, {"pipelined_zero", bad}})
                  .find("fw.json: key 'pipelined_zero': must be 0, 1, 2 or 3"),
              std::string::npos)
        << bad;
  }
  EXPECT_EQ(error_of({{"name", "x"}, {"sources", {"s"}}, {"pipelined_zero", 0}}), "");
}

TEST(CostFramework, ZeroStagesAreTheOnesAStackRuns) {
  // Megatron-LM of 2021 and 2022 keeps whole replicas; FSDP stacks shard nothing, or gradients and
  // parameters with the optimizer states, never those alone; flash-attn's recipes run DDP or
  // ZeRO-1.
  const std::map<std::string, std::array<bool, 4>> fewer = {
      {"megatron-2021", {true, false, false, false}},
      {"megatron-2022", {true, false, false, false}},
      {"torchtitan", {true, false, false, true}},
      {"llm-foundry", {true, false, true, true}},
      {"fms-fsdp", {true, false, false, true}},
      {"flash-attn-training", {true, true, false, false}}};
  for (const std::string& n : list_frameworks()) {
    const auto it = fewer.find(n);
    const std::array<bool, 4> all = {true, true, true, true};
    EXPECT_EQ(find_framework(n).zero_stages, it == fewer.end() ? all : it->second) << n;
  }
  for (const std::string& n : list_frameworks())
    EXPECT_EQ(find_framework(n).replicate_alone, n == "torchtitan") << n;
  const Framework f = parse_framework({{"name", "x"}, {"zero_stages", {3, 0}}}, "fw.json");
  EXPECT_TRUE(f.runs_zero(0) && f.runs_zero(3));
  EXPECT_FALSE(f.runs_zero(1) || f.runs_zero(2) || f.runs_zero(4) || f.runs_zero(-1));
  for (const nlohmann::json& bad :
       {nlohmann::json::array(), nlohmann::json(1), nlohmann::json({0, 4}), nlohmann::json({0, 0}),
        nlohmann::json({"0"}), nlohmann::json({1.5})}) {
    EXPECT_NE(error_of({{"name", "x"}, {"zero_stages", bad}})
                  .find("fw.json: key 'zero_stages': must be a non-empty list of distinct stages"),
              std::string::npos)
        << bad;
  }
}

TEST(CostFramework, OnlyTransformerEnginesStacksOfferFp8) {
  for (const std::string& n : list_frameworks())
    EXPECT_EQ(find_framework(n).has_fp8, n == "megatron-core-2024" || n == "nemo-24.09") << n;
  EXPECT_NE(error_of({{"name", "x"}, {"fp8", "te"}})
                .find("fw.json: key 'fp8': must be \"transformer-engine\""),
            std::string::npos);
  EXPECT_TRUE(parse_framework({{"name", "x"}, {"fp8", "transformer-engine"}}, "fw.json").has_fp8);
}

TEST(CostFramework, OnlyTorchtitanShardsOnceAStepBesidePipelining) {
  // torch.distributed.pipelining turns FSDP2's sync and reshard off until the step's last
  // backward, and torchtitan does not reshard after forward with PP (docs/ACCURACY.md item 44).
  for (const std::string& n : list_frameworks())
    EXPECT_EQ(find_framework(n).pipelined_sharding_per_step, n == "torchtitan") << n;
  EXPECT_FALSE(
      parse_framework({{"name", "x"}, {"sources", {"s"}}}, "fw.json").pipelined_sharding_per_step);
  EXPECT_FALSE(parse_framework({{"name", "x"}, {"pipelined_sharding", "per-microbatch"}}, "fw.json")
                   .pipelined_sharding_per_step);
  for (const nlohmann::json& bad : {nlohmann::json("per-layer"), nlohmann::json(true)}) {
    EXPECT_NE(error_of({{"name", "x"}, {"pipelined_sharding", bad}})
                  .find("fw.json: key 'pipelined_sharding': must be \"per-step\" or "
                        "\"per-microbatch\""),
              std::string::npos)
        << bad;
  }
}

TEST(CostFramework, RecomputeEarlyStopFollowsTheStacksCheckpointCode) {
  // torch.utils.checkpoint's non-reentrant checkpoint stops its recomputation early from PyTorch
  // 2.1 on: torchtitan and fms-fsdp wrap their blocks in it. llm-foundry's runs predate 2.1, and
  // Megatron's and DeepSpeed's own checkpoints rerun the whole function.
  EXPECT_TRUE(find_framework("torchtitan").recompute_early_stop);
  EXPECT_TRUE(find_framework("fms-fsdp").recompute_early_stop);
  for (const char* name :
       {"llm-foundry", "megatron-2022", "megatron-core-2024", "deepspeed-megatron", "llama3-2024"})
    EXPECT_FALSE(find_framework(name).recompute_early_stop) << name;
  EXPECT_NE(error_of({{"name", "x"}, {"recompute_early_stop", "yes"}})
                .find("fw.json: key 'recompute_early_stop': must be true or false"),
            std::string::npos);
}

TEST(CostFramework, LossBytesArePerLogitAndNamedWhenWrong) {
  // Default: one fp32 read and write of each logit each way. torchtitan's eager fp32 loss moves
  // more, flash-attention's fused kernel over bf16 logits less (each profile's sources).
  const Framework plain = parse_framework({{"name", "x"}}, "fw.json");
  EXPECT_DOUBLE_EQ(plain.loss_forward_bytes, 8);
  EXPECT_DOUBLE_EQ(plain.loss_backward_bytes, 8);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").loss_forward_bytes, 22);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").loss_backward_bytes, 26);
  EXPECT_DOUBLE_EQ(find_framework("flash-attn-training").loss_forward_bytes, 4);
  EXPECT_DOUBLE_EQ(find_framework("flash-attn-training").loss_backward_bytes, 4);
  for (const char* name : {"megatron-2022", "megatron-core-2024", "deepspeed-megatron"}) {
    EXPECT_DOUBLE_EQ(find_framework(name).loss_forward_bytes, 38) << name;
    EXPECT_DOUBLE_EQ(find_framework(name).loss_backward_bytes, 14) << name;
  }
  const Framework half =
      parse_framework({{"name", "x"}, {"loss_bytes", {{"backward", 26}}}}, "fw.json");
  EXPECT_DOUBLE_EQ(half.loss_forward_bytes, 8);  // an absent half keeps its default
  EXPECT_DOUBLE_EQ(half.loss_backward_bytes, 26);
  expect_byte_pair_refused("loss_bytes", "forward", 70, "logit");
}

TEST(CostFramework, LossSavedBytesFollowTheTensorsTheLossKeeps) {
  // Default: an fp32 copy of each logit. The fused kernels keep the bf16 logits and rebuild the
  // softmax from them; torch's log_softmax and Megatron's vocab-parallel loss keep an fp32 softmax.
  EXPECT_DOUBLE_EQ(parse_framework({{"name", "x"}}, "fw.json").loss_saved_bytes, 4);
  for (const char* name : {"flash-attn-training", "llm-foundry"})
    EXPECT_DOUBLE_EQ(find_framework(name).loss_saved_bytes, 2) << name;
  for (const char* name :
       {"torchtitan", "megatron-2022", "megatron-core-2024", "deepspeed-megatron"})
    EXPECT_DOUBLE_EQ(find_framework(name).loss_saved_bytes, 4) << name;
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(17), nlohmann::json("2")})
    EXPECT_EQ(error_of({{"name", "x"}, {"loss_saved_bytes", bad}}),
              "fw.json: key 'loss_saved_bytes': must be a number of bytes per logit in [0, 16]")
        << bad.dump();
}

TEST(CostFramework, LossPeakBytesHoldWhatTheLossWorksOnBesideWhatItSaves) {
  // Default: the saved bytes and one fp32 gradient of the logits. Each profile counts its loss's
  // code (item 40): torch's log-softmax backward holds three fp32 tensors at once, Megatron's
  // losses write the gradient over the saved softmax and copy it to bf16, the fused kernels hold
  // the bf16 logits and at most one bf16 gradient.
  EXPECT_DOUBLE_EQ(parse_framework({{"name", "x"}}, "fw.json").loss_peak(), 8);
  EXPECT_DOUBLE_EQ(parse_framework({{"name", "x"}, {"loss_saved_bytes", 2}}, "fw.json").loss_peak(),
                   6);
  EXPECT_DOUBLE_EQ(find_framework("torchtitan").loss_peak(), 12);
  for (const char* name :
       {"megatron-2021", "megatron-2022", "megatron-core-2024", "nemo-24.09", "deepspeed-megatron"})
    EXPECT_DOUBLE_EQ(find_framework(name).loss_peak(), 6) << name;
  EXPECT_DOUBLE_EQ(find_framework("llm-foundry").loss_peak(), 4);
  EXPECT_DOUBLE_EQ(find_framework("flash-attn-training").loss_peak(), 2);
  for (const char* name : {"fms-fsdp", "llama3-2024"})  // the default, an assumption each says
    EXPECT_DOUBLE_EQ(find_framework(name).loss_peak(), 8) << name;
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(65), nlohmann::json("8")})
    EXPECT_EQ(error_of({{"name", "x"}, {"loss_peak_bytes", bad}}),
              "fw.json: key 'loss_peak_bytes': must be a number of bytes per logit in [0, 64]")
        << bad.dump();
  EXPECT_EQ(
      error_of({{"name", "x"}, {"loss_peak_bytes", 3}}),
      "fw.json: key 'loss_peak_bytes': must be at least loss_saved_bytes (4): the peak holds what "
      "the loss saves");
}

TEST(CostFramework, TheStacksThatParallelizeByFsdpAloneLackTheOtherSplits) {
  for (const char* fsdp : {"llm-foundry", "fms-fsdp"}) {
    const Framework f = find_framework(fsdp);
    EXPECT_FALSE(f.has_tensor_parallel) << fsdp;
    EXPECT_FALSE(f.has_pipeline_parallel) << fsdp;
    EXPECT_FALSE(f.has_context_parallel) << fsdp;
  }
  for (const std::string& name : list_frameworks()) {  // no other profile states such a lack
    if (name == "llm-foundry" || name == "fms-fsdp") continue;
    const Framework f = find_framework(name);
    EXPECT_TRUE(f.has_tensor_parallel && f.has_pipeline_parallel && f.has_context_parallel) << name;
  }
  const Framework some = parse_framework(
      {{"name", "x"}, {"lacks", {"tensor_parallel", "pipeline_parallel", "context_parallel"}}},
      "fw.json");
  EXPECT_FALSE(some.has_tensor_parallel || some.has_pipeline_parallel || some.has_context_parallel);
  EXPECT_TRUE(some.has_sequence_parallel && some.has_flash_attention);
}

TEST(CostFramework, HeldUnshardedIsWhatEachStacksFsdpKeepsWholeAfterTheForward) {
  // Default: nothing. FSDP1 and FSDP2 keep the root unit whole after the forward; torchtitan also
  // keeps its last block (item 48); the stacks that do not shard parameters say nothing.
  const Framework plain = parse_framework({{"name", "x"}}, "fw.json");
  EXPECT_FALSE(plain.held_unsharded.root);
  EXPECT_EQ(plain.held_unsharded.last_layers, 0);
  EXPECT_TRUE(find_framework("torchtitan").held_unsharded.root);
  EXPECT_EQ(find_framework("torchtitan").held_unsharded.last_layers, 1);
  for (const char* fsdp1 : {"llm-foundry", "fms-fsdp"}) {
    EXPECT_TRUE(find_framework(fsdp1).held_unsharded.root) << fsdp1;
    EXPECT_EQ(find_framework(fsdp1).held_unsharded.last_layers, 0) << fsdp1;
  }
  // Each gathers one block ahead in the backward (item 49).
  for (const char* fsdp : {"torchtitan", "llm-foundry", "fms-fsdp"})
    EXPECT_EQ(find_framework(fsdp).held_unsharded.prefetch_layers, 1) << fsdp;
  for (const char* name : {"megatron-2022", "megatron-core-2024", "nemo-24.09",
                           "deepspeed-megatron", "llama3-2024", "flash-attn-training"}) {
    EXPECT_FALSE(find_framework(name).held_unsharded.root) << name;
    EXPECT_EQ(find_framework(name).held_unsharded.last_layers, 0) << name;
    EXPECT_EQ(find_framework(name).held_unsharded.prefetch_layers, 0) << name;
  }
  const Framework two = parse_framework(
      {{"name", "x"}, {"held_unsharded", {{"root", false}, {"last_layers", 2}}}}, "fw.json");
  EXPECT_FALSE(two.held_unsharded.root);
  EXPECT_EQ(two.held_unsharded.last_layers, 2);
  EXPECT_EQ(two.held_unsharded.prefetch_layers, 0);  // optional
  const Framework ahead = parse_framework(
      {{"name", "x"},
       {"held_unsharded", {{"root", true}, {"last_layers", 0}, {"prefetch_layers", 2}}}},
      "fw.json");
  EXPECT_EQ(ahead.held_unsharded.prefetch_layers, 2);
  const std::string want =
      "fw.json: key 'held_unsharded': must be {\"root\": true or false, \"last_layers\": an "
      "integer in [0, 1000], \"prefetch_layers\" (optional): an integer in [0, 1000]}: what FSDP "
      "keeps whole while the loss runs and gathers ahead in the backward";
  for (const nlohmann::json& bad :
       {nlohmann::json(true), nlohmann::json({{"root", true}}),
        nlohmann::json({{"root", 1}, {"last_layers", 0}}),
        nlohmann::json({{"root", true}, {"last_layers", -1}}),
        nlohmann::json({{"root", true}, {"last_layers", 1.5}}),
        nlohmann::json({{"root", true}, {"last_layers", 0}, {"first_layers", 1}}),
        nlohmann::json({{"root", true}, {"last_layers", 0}, {"prefetch_layers", -1}}),
        nlohmann::json({{"root", true}, {"last_layers", 0}, {"prefetch_layers", "1"}})})
    EXPECT_EQ(error_of({{"name", "x"}, {"held_unsharded", bad}}), want) << bad.dump();
}

TEST(CostFramework, ElementwiseGradientCountsFollowEachStacksBackwardCode) {
  // Unstated: the rule (a negative count). The eager stacks' RMSNorm runs its backward op by op,
  // PyTorch's layer norm its weight gradient in a kernel of its own (the profiles' sources).
  const Framework plain = parse_framework({{"name", "x"}}, "fw.json");
  EXPECT_LT(plain.passes.norm_grad, 0);
  EXPECT_LT(plain.passes.activation_grad, 0);
  for (const char* eager : {"torchtitan", "fms-fsdp"}) {
    EXPECT_DOUBLE_EQ(find_framework(eager).passes.norm, 18) << eager;
    EXPECT_DOUBLE_EQ(find_framework(eager).passes.norm_grad, 46) << eager;
    EXPECT_DOUBLE_EQ(find_framework(eager).passes.activation_grad, 4.5) << eager;
  }
  EXPECT_DOUBLE_EQ(find_framework("llm-foundry").passes.norm_grad, 5);
  EXPECT_DOUBLE_EQ(find_framework("flash-attn-training").passes.norm_grad, 8.5);
  for (const char* fused : {"megatron-2022", "megatron-core-2024", "llama3-2024"})
    EXPECT_LT(find_framework(fused).passes.norm_grad, 0) << fused;
  const Framework half = parse_framework(
      {{"name", "x"}, {"elementwise_backward_passes", {{"activation", 3}}}}, "fw.json");
  EXPECT_DOUBLE_EQ(half.passes.activation_grad, 3);
  EXPECT_LT(half.passes.norm_grad, 0);  // an absent key keeps the rule
}

TEST(CostFramework, MemoryKeysFollowEachStacksLayers) {
  // Dropout masks by default (Megatron's, Korthikanti et al.'s accounting); the stacks without
  // dropout or at p = 0 keep none. Only torchtitan's DTensor plan saves the gathered tp input.
  const Framework plain = parse_framework({{"name", "x"}}, "fw.json");
  EXPECT_TRUE(plain.hidden_dropout);
  EXPECT_FALSE(plain.tp_saves_gathered_input);
  for (const char* none : {"torchtitan", "fms-fsdp", "llm-foundry", "llama3-2024"})
    EXPECT_FALSE(find_framework(none).hidden_dropout) << none;
  for (const char* with : {"megatron-2022", "megatron-core-2024", "flash-attn-training"})
    EXPECT_TRUE(find_framework(with).hidden_dropout) << with;
  EXPECT_TRUE(find_framework("torchtitan").tp_saves_gathered_input);
  // PyTorch's SDPA took no grouped K and V before 2.5: the torch-native stacks repeat them.
  EXPECT_FALSE(plain.gqa_expand);
  EXPECT_TRUE(find_framework("torchtitan").gqa_expand);
  EXPECT_TRUE(find_framework("fms-fsdp").gqa_expand);
  EXPECT_FALSE(find_framework("megatron-core-2024").gqa_expand);
  EXPECT_FALSE(find_framework("megatron-core-2024").tp_saves_gathered_input);
  // Attention dropout: off unless a profile says its stack applies it (item 36).
  EXPECT_FALSE(plain.attention_dropout);
  for (const char* with :
       {"flash-attn-training", "megatron-2022", "megatron-core-2024", "deepspeed-megatron"})
    EXPECT_TRUE(find_framework(with).attention_dropout) << with;
  for (const char* none : {"torchtitan", "fms-fsdp", "llm-foundry", "llama3-2024", "nemo-24.09"})
    EXPECT_FALSE(find_framework(none).attention_dropout) << none;
  for (const char* key :
       {"hidden_dropout", "attention_dropout", "tp_saves_gathered_input", "gqa_expand"})
    EXPECT_NE(error_of({{"name", "x"}, {key, 1}})
                  .find("fw.json: key '" + std::string(key) + "': must be true or false"),
              std::string::npos)
        << key;
}

TEST(CostFramework, OnlyMegatronCoresSelectiveRecomputationRerunsAFlashKernel) {
  // megatron/core/transformer/attention.py checkpoints the core attention under 'selective';
  // Megatron-LM's ParallelAttention, and the stacks without Megatron's selective mode, do not.
  EXPECT_FALSE(parse_framework({{"name", "x"}}, "fw.json").selective_recomputes_flash);
  EXPECT_TRUE(find_framework("megatron-core-2024").selective_recomputes_flash);
  EXPECT_TRUE(find_framework("nemo-24.09").selective_recomputes_flash);
  for (const char* name : {"megatron-2022", "deepspeed-megatron", "llama3-2024", "torchtitan",
                           "fms-fsdp", "llm-foundry", "flash-attn-training"})
    EXPECT_FALSE(find_framework(name).selective_recomputes_flash) << name;
  EXPECT_NE(error_of({{"name", "x"}, {"selective_recomputes_flash", 1}})
                .find("fw.json: key 'selective_recomputes_flash': must be true or false"),
            std::string::npos);
}

TEST(CostFramework, QkvSplitGradientsFollowEachStacksAttentionCode) {
  // Megatron-LM and MPT split one projection's output; megatron-core's TE split returns the
  // gradients' shared buffer; flash-attention packs qkv; torchtitan projects q, k, v apart.
  EXPECT_FALSE(parse_framework({{"name", "x"}}, "fw.json").qkv_split_grad);
  EXPECT_TRUE(find_framework("megatron-2022").qkv_split_grad);
  EXPECT_TRUE(find_framework("deepspeed-megatron").qkv_split_grad);
  EXPECT_TRUE(find_framework("llm-foundry").qkv_split_grad);
  for (const char* name : {"megatron-core-2024", "flash-attn-training", "torchtitan", "fms-fsdp"})
    EXPECT_FALSE(find_framework(name).qkv_split_grad) << name;
  EXPECT_NE(error_of({{"name", "x"}, {"qkv_split_grad", "yes"}})
                .find("fw.json: key 'qkv_split_grad': must be true or false"),
            std::string::npos);
}

TEST(CostFramework, EveryKeyAProfileMayHoldIsDocumented) {
  // docs/ACCURACY.md's "Framework profiles" table is the profiles' key reference (docs/CONFIG.md
  // points there); a key the parser accepts but the table lacks is a key no user can look up.
  std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/docs/ACCURACY.md");
  ASSERT_TRUE(in) << "docs/ACCURACY.md";
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const size_t section = text.find("### Framework profiles");
  ASSERT_NE(section, std::string::npos);
  const size_t end = text.find("\n### ", section + 1);
  const std::string table = text.substr(section, end - section);
  const std::vector<std::string> keys = framework_keys();
  EXPECT_GT(keys.size(), 15u);
  for (const std::string& k : keys)
    EXPECT_NE(table.find("| `" + k + "`"), std::string::npos)
        << k << " has no row in docs/ACCURACY.md's Framework profiles table";
}

TEST(CostFramework, UserbuffersSettingsAreTransformerEnginesOneEntryPerGemm) {
  // megatron-core-2024 offers TE's defaults; the others none.
  const auto& ub = find_framework("megatron-core-2024").tp_comm_overlap;
  ASSERT_TRUE(ub.has_value());
  for (size_t i = 0; i < model::kTpOverlapGemms.size(); ++i) {
    SCOPED_TRACE(model::kTpOverlapGemms[i]);
    const model::TpOverlapCfg& c = (*ub)[i];
    const bool ring = c.method == model::TpOverlapCfg::Method::kRingExchange;
    EXPECT_EQ(c.num_sm, ring ? 1 : 16);
    EXPECT_EQ(c.num_splits, c.method == model::TpOverlapCfg::Method::kPipeline ? 4 : 1);
  }
  EXPECT_FALSE(find_framework("megatron-2022").tp_comm_overlap.has_value());
  EXPECT_FALSE(find_framework("torchtitan").tp_comm_overlap.has_value());

  nlohmann::json all = nlohmann::json::object();
  for (std::string_view g : model::kTpOverlapGemms)
    all[std::string(g)] = {{"method", "bulk"}, {"num_sm", 8}};
  EXPECT_EQ(error_of({{"name", "x"}, {"tp_comm_overlap", all}}), "");
  auto error_with = [&](const std::string& gemm, const nlohmann::json& entry) {
    nlohmann::json j = all;
    if (entry.is_null())
      j.erase(gemm);
    else
      j[gemm] = entry;
    return error_of({{"name", "x"}, {"tp_comm_overlap", j}});
  };
  EXPECT_NE(
      error_with("fc2_dgrad", nullptr).find("fw.json: key 'tp_comm_overlap.fc2_dgrad': missing"),
      std::string::npos);
  EXPECT_NE(error_with("qkv_fprop", {{"method", "ring"}})
                .find("key 'tp_comm_overlap.qkv_fprop.method': must be ring_exchange, pipeline"),
            std::string::npos);
  EXPECT_NE(error_with("proj_fprop", {{"method", "pipeline"}, {"num_sm", 16}})
                .find("key 'tp_comm_overlap.proj_fprop.num_splits': missing"),
            std::string::npos);
  EXPECT_NE(error_with("qkv_fprop", {{"method", "ring_exchange"}, {"num_splits", 4}})
                .find("key 'tp_comm_overlap.qkv_fprop.num_splits': only a pipeline has chunks"),
            std::string::npos);
  EXPECT_NE(error_with("fc1_wgrad", {{"method", "bulk"}, {"num_sm", 0}})
                .find("key 'tp_comm_overlap.fc1_wgrad.num_sm': must be a whole number of SMs"),
            std::string::npos);
  EXPECT_NE(error_with("fc1_wgrad", {{"method", "bulk"}})
                .find("key 'tp_comm_overlap.fc1_wgrad.num_sm': missing"),
            std::string::npos);
  EXPECT_NE(error_with("fc1_wgrad", {{"method", "bulk"}, {"num_sm", 2}, {"cga", 2}})
                .find("key 'tp_comm_overlap.fc1_wgrad.cga': unknown key"),
            std::string::npos);
  all["attn_fprop"] = all["qkv_fprop"];
  EXPECT_NE(error_of({{"name", "x"}, {"tp_comm_overlap", all}})
                .find("key 'tp_comm_overlap.attn_fprop': unknown key"),
            std::string::npos);
}

}  // namespace
}  // namespace meshscope::cost
