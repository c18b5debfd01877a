// Transformer Engine's FP8 linears (options.fp8; docs/ACCURACY.md item 50): which GEMMs run in
// FP8, the casts around them, what their all-gathers move and keep, and which configs may ask.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/model/transformer.h"
#include "sim/predict/breakdown.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"
#include "tests/sim/config_error.h"

namespace meshscope::predict {
namespace {

using model::LayerCost;
using model::OpCost;
using nlohmann::json;

// A Llama-like layer on 4 tp ranks: 8 heads of 128 in 4 kv groups, ffn 2,816 gated, 2 x 1,024
// tokens.
model::TransformerShape shape() {
  return {.hidden = 1024, .heads = 8, .kv_heads = 4, .ffn = 2816, .gated_mlp = true};
}
model::LayerParallel parallel(bool fp8, bool sp) {
  model::LayerParallel p;
  p.micro_batch = 2;
  p.seq = 1024;
  p.tp = 4;
  p.sequence_parallel = sp;
  p.fp8 = fp8;
  return p;
}

double bytes_named(const std::vector<OpCost>& ops, const std::string& name) {
  for (const OpCost& op : ops)
    if (op.name == name) return op.bytes;
  ADD_FAILURE() << "no op " << name;
  return 0;
}

TEST(PredictFp8, TheFourLinearsRunInFp8WithTransformerEnginesCastsAroundThem) {
  const double T = 2048, h = 1024, t = 4, qkv_out = T * (8 + 2 * 4) * 128 / t,
               fc1_out = T * 2 * 2816 / t, fc2_in = T * 2816 / t;
  for (bool sp : {true, false}) {
    SCOPED_TRACE(sp ? "sequence parallel" : "no sequence parallelism");
    const LayerCost bf16 = model::transformer_layer(shape(), parallel(false, sp));
    const LayerCost fp8 = model::transformer_layer(shape(), parallel(true, sp));
    int fp8_gemms = 0;
    for (const auto* phase : {&fp8.forward, &fp8.input_grad, &fp8.weight_grad})
      for (const OpCost& op : *phase) {
        const bool linear = op.name.starts_with("attn.qkv") || op.name.starts_with("attn.proj") ||
                            op.name.starts_with("mlp.fc1") || op.name.starts_with("mlp.fc2");
        if (op.kind == model::OpKind::kGemm) {
          EXPECT_EQ(op.fp8, linear) << op.name;  // attention's GEMMs and everything else: bf16
          fp8_gemms += op.fp8;
        } else {
          // Only TE's casts and transposes are marked, for the breakdown's fp8_casts term.
          EXPECT_EQ(op.fp8, op.name.find(".fp8_") != std::string::npos) << op.name;
        }
      }
    EXPECT_EQ(fp8_gemms, 12);  // four linears, three GEMMs each
    // LayerNormLinear (qkv, fc1): the output gradient cast and transposed (2 + 2), the FP8 input
    // transposed for the weight gradient (1 + 1), gathered or not.
    EXPECT_DOUBLE_EQ(bytes_named(fp8.input_grad, "attn.qkv.fp8_grad_cast_transpose"), 4 * qkv_out);
    EXPECT_DOUBLE_EQ(bytes_named(fp8.weight_grad, "attn.qkv.fp8_input_transpose"), 2 * T * h);
    EXPECT_DOUBLE_EQ(bytes_named(fp8.input_grad, "mlp.fc1.fp8_grad_cast_transpose"), 4 * fc1_out);
    if (sp) {
      // Linear (proj, fc2): cast the input (2 + 1); cast the output gradient's shard (2 + 1),
      // transpose it gathered (1 + 1); transpose the saved input (1 + 1).
      EXPECT_DOUBLE_EQ(bytes_named(fp8.forward, "mlp.fc2.fp8_input_cast"), 3 * fc2_in);
      EXPECT_DOUBLE_EQ(bytes_named(fp8.input_grad, "mlp.fc2.fp8_grad_cast"), 3 * T * h / t);
      EXPECT_DOUBLE_EQ(bytes_named(fp8.input_grad, "mlp.fc2.fp8_grad_transpose"), 2 * T * h);
      EXPECT_DOUBLE_EQ(bytes_named(fp8.weight_grad, "mlp.fc2.fp8_input_transpose"), 2 * fc2_in);
    } else {
      EXPECT_DOUBLE_EQ(bytes_named(fp8.forward, "attn.proj.fp8_input_cast_transpose"),
                       4 * T * h / t);
      EXPECT_DOUBLE_EQ(bytes_named(fp8.input_grad, "attn.proj.fp8_grad_cast_transpose"), 4 * T * h);
    }
    // Kept for the backward: qkv's and fc1's inputs and fc2's in FP8, and proj's FP8 copy beside
    // the attention output.
    const double linear_in = sp ? T / t : T;
    EXPECT_DOUBLE_EQ(double(bf16.activation_bytes - fp8.activation_bytes),
                     2 * linear_in * h + fc2_in - T * h / t);
    EXPECT_EQ(fp8.linear_weights, bf16.linear_weights);
    EXPECT_EQ(fp8.linear_weights, h * 16 * 128 / 4 + h * h / 4 + 3 * h * 2816 / 4);
    // Under sequence parallelism every tp all-gather moves FP8, the reduce-scatters bf16.
    std::map<std::string, int64_t> bf16_bytes;
    for (const auto* v : {&bf16.comm_forward, &bf16.comm_backward})
      for (const model::TpCollective& c : *v)
        bf16_bytes[c.name + std::string(traces::name(c.op))] = c.bytes;
    for (const auto* v : {&fp8.comm_forward, &fp8.comm_backward})
      for (const model::TpCollective& c : *v) {
        const int64_t was = bf16_bytes[c.name + std::string(traces::name(c.op))];
        EXPECT_EQ(c.bytes, sp && c.op == model::CommOp::kAllGather ? was / 2 : was) << c.name;
      }
  }
}

json llama(bool fp8) {
  json j = json::parse(R"({
    "model": {"kind": "gpt", "layers": 8, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
              "gated_mlp": true, "seq": 4096, "vocab": 32000},
    "mesh": {"dp": 2, "tp": 4, "pp": 1}, "batch": {"global": 16, "micro": 1},
    "framework": "nemo-24.09", "cluster": {"gpu": "h100-sxm"},
    "options": {"sequence_parallel": true}})");
  j["options"]["fp8"] = fp8;
  return j;
}

Summary run(const json& j) {
  return simulate(parse_config(j, "cfg.json"), {.build_timeline = false}).summary;
}

TEST(PredictFp8, AnFp8StepIsFasterThanItsBf16OneButNotByTheGemmsAlone) {
  const Summary bf16 = run(llama(false)), fp8 = run(llama(true));
  EXPECT_LT(fp8.step_time_s, bf16.step_time_s);
  // Its range is the BF16 runs' of its profile, and says so.
  EXPECT_TRUE(fp8.range_without_fp8);
  EXPECT_FALSE(bf16.range_without_fp8);
  EXPECT_EQ(fp8.range_basis, bf16.range_basis);
  // The linears' GEMMs run at about twice the rate; attention, the output layer, elementwise ops
  // and the casts do not.
  EXPECT_GT(fp8.step_time_s, bf16.step_time_s / 2);
  // --breakdown gives TE's casts a term of their own; the bf16 run has none.
  EXPECT_GT(fp8.breakdown.busy[Term::kFp8Casts], 0);
  EXPECT_EQ(bf16.breakdown.busy[Term::kFp8Casts], 0);
  EXPECT_LT(fp8.breakdown.busy[Term::kFp8Casts], 0.1 * fp8.step_time_s);
  // The same model FLOPs over the bf16 peak (as NVIDIA's tables count an FP8 run's MFU).
  EXPECT_NEAR(fp8.mfu * fp8.step_time_s, bf16.mfu * bf16.step_time_s, 1e-9);
  // Memory: without FP8 parameters TE caches an FP8 copy of each linear weight and its transpose
  // beside the bf16 one, 2 bytes a weight on each of the 8 layers; with them, nothing beside.
  json params = llama(true);
  params["options"]["fp8_params"] = true;
  const Summary held = run(params);
  EXPECT_DOUBLE_EQ(held.step_time_s, fp8.step_time_s);  // memory only
  EXPECT_EQ(fp8.memory[0].parameters_bytes - held.memory[0].parameters_bytes,
            2 * 8 * (4096 * (32 + 16) * 128 / 4 + 4096 * 4096 / 4 + 3 * 4096 * 14336 / 4));
}

TEST(PredictFp8, OnlyAStackAndAGpuThatHaveFp8MayAskForIt) {
  using testing::error_of;
  json j = llama(true);
  EXPECT_EQ(error_of(j), "");
  j["framework"] = "torchtitan";
  EXPECT_NE(error_of(j).find("key 'options.fp8': framework 'torchtitan' has no FP8 linears"),
            std::string::npos)
      << error_of(j);
  j = llama(true);
  j["cluster"]["gpu"] = "a100-80gb";
  EXPECT_NE(error_of(j).find("key 'options.fp8': gpu 'a100-80gb' has no FP8 rate"),
            std::string::npos)
      << error_of(j);
  j = llama(true);
  j["options"]["precision"] = "fp32";
  EXPECT_NE(error_of(j).find("key 'options.fp8': needs options.precision bf16 or fp16"),
            std::string::npos);
  j = llama(true);
  j["model"]["experts"] = 8;
  EXPECT_NE(error_of(j).find("key 'options.fp8': model.experts"), std::string::npos);
  j = llama(false);
  j["options"]["fp8_params"] = true;
  EXPECT_NE(error_of(j).find("key 'options.fp8_params': needs options.fp8 true"),
            std::string::npos);
}

}  // namespace
}  // namespace meshscope::predict
