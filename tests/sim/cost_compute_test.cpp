#include "sim/cost/compute_model.h"

#include <gtest/gtest.h>

namespace meshscope::cost {
namespace {

Hardware toy() {
  Hardware hw;
  hw.name = "toy";
  hw.peak_flops[static_cast<size_t>(Precision::kBf16)] = 100e12;
  hw.memory_bandwidth_bytes_per_s = 1e12;
  hw.compute_units = 100;
  hw.launch_overhead_ns = 1000;
  hw.efficiency = Efficiency{};
  hw.efficiency.gemm_max = 0.8;
  hw.efficiency.tile_m = 128;
  hw.efficiency.tile_n = 128;
  hw.efficiency.k_half = 0;  // isolate tile and wave effects
  hw.efficiency.memory = 0.5;
  return hw;
}

TEST(CostCompute, LargeAlignedGemmReachesTheCeiling) {
  const Hardware hw = toy();
  // 1280 x 1280 = 100 tiles of 128 x 128: one full wave on 100 units.
  EXPECT_DOUBLE_EQ(gemm_efficiency(hw, 1280, 1280, 4096), 0.8);
}

TEST(CostCompute, TileAndWaveQuantizationCost) {
  const Hardware hw = toy();
  // 101 tiles need two waves: best of the tile choices is well under the ceiling.
  const double one_more = gemm_efficiency(hw, 1280 + 128, 1280, 4096);
  EXPECT_LT(one_more, 0.8);
  // A ragged edge pads tiles.
  EXPECT_LT(gemm_efficiency(hw, 1281, 1280, 4096), 0.8);
  // Reductions too short to amortise the main loop pay k / (k + k_half).
  Hardware h = toy();
  h.efficiency.k_half = 128;
  EXPECT_NEAR(gemm_efficiency(h, 1280, 1280, 128), 0.8 * 0.5, 1e-12);
}

TEST(CostCompute, OpTimeIsTheRooflineMaximumPlusLaunch) {
  const ComputeModel cm(toy(), Precision::kBf16);
  model::OpCost gemm{"g", model::OpKind::kGemm, 2.0 * 1280 * 1280 * 4096, 1e6, 1280, 1280, 4096};
  EXPECT_NEAR(cm.op_seconds(gemm), gemm.flops / (100e12 * 0.8) + 1e-6, 1e-15);
  model::OpCost add{"add", model::OpKind::kElementwise, 1e6, 8e9};
  EXPECT_NEAR(cm.op_seconds(add), 8e9 / (1e12 * 0.5) + 1e-6, 1e-12);  // memory-bound
}

TEST(CostCompute, AnAttentionBackwardRunsAtItsOwnRateWhenOneIsSet) {
  Hardware hw = toy();
  hw.launch_overhead_ns = 0;
  hw.efficiency.attention = 0.4;
  model::OpCost forward{"attn.core", model::OpKind::kAttention, 1e12};
  model::OpCost backward = forward;
  backward.backward = true;
  const ComputeModel one_rate(hw, Precision::kBf16);
  EXPECT_NEAR(one_rate.op_seconds(backward), 1e12 / (100e12 * 0.4), 1e-15);
  hw.efficiency.attention_backward = 0.25;
  const ComputeModel two_rates(hw, Precision::kBf16);
  EXPECT_NEAR(two_rates.op_seconds(forward), 1e12 / (100e12 * 0.4), 1e-15);
  EXPECT_NEAR(two_rates.op_seconds(backward), 1e12 / (100e12 * 0.25), 1e-15);
}

// docs/ACCURACY.md item 35: a causal FlashAttention kernel's rate grows with the query blocks of a
// sequence as n / (n + 4.2), n = L / 128; the catalog's rates hold at the length they were measured
// at, and an entry that names no length is not scaled.
TEST(CostCompute, AFusedAttentionRunsAtItsMeasuredRateOnlyAtItsMeasuredLength) {
  Hardware hw = toy();
  hw.launch_overhead_ns = 0;
  hw.efficiency.attention = 0.4;
  model::OpCost op{"attn.core", model::OpKind::kAttention, 1e12};
  const auto seconds = [&](int64_t query_tokens) {
    op.m = query_tokens;
    return ComputeModel(hw, Precision::kBf16).op_seconds(op);
  };
  const double measured = 1e12 / (100e12 * 0.4);
  // No measured length: every length runs at the catalog's rate.
  for (int64_t L : {0, 512, 8192, 131072}) EXPECT_NEAR(seconds(L), measured, 1e-15) << L;
  hw.efficiency.attention_seq = 8192;
  EXPECT_NEAR(seconds(8192), measured, 1e-15);
  EXPECT_NEAR(seconds(0), measured, 1e-15);  // a length not known is not scaled
  // 2,048 tokens: 16 query blocks against 64, (16 / 20.2) / (64 / 68.2) of the rate: 18.5% longer.
  const double at_2k = (16.0 / 20.2) / (64.0 / 68.2);
  EXPECT_NEAR(seconds(2048), measured / at_2k, 1e-15);
  EXPECT_NEAR(seconds(2048) / measured, 1.1848, 1e-4);
  // Longer sequences run faster, towards 68.2 / 64 of the rate and never past it.
  EXPECT_LT(seconds(16384), measured);
  EXPECT_GT(seconds(1 << 24), measured * 64 / 68.2);
  // The backward scales alike.
  hw.efficiency.attention_backward = 0.25;
  op.backward = true;
  EXPECT_NEAR(seconds(2048), 1e12 / (100e12 * 0.25 * at_2k), 1e-15);
  EXPECT_DOUBLE_EQ(attention_sequence_factor(hw, 8192), 1.0);
}

TEST(CostCompute, AttentionDropoutCostsTheFlashAttentionPapersMeasuredShareOverTheHeadDim) {
  Hardware hw = toy();
  hw.launch_overhead_ns = 0;
  hw.efficiency.attention = 0.4;
  hw.efficiency.attention_backward = 0.25;
  model::OpCost op{"attn.core", model::OpKind::kAttention, 1e12};
  op.m = 2048;
  op.k = 64;
  const ComputeModel cm(hw, Precision::kBf16, nullptr, AttentionKernel::kFlash1);
  const double plain = cm.op_seconds(op);
  op.dropout = true;
  // Head dim 64 at 2,048 tokens: the paper's forward ratios 2.85 / 2.28 and 2.81 / 2.40, 21% more.
  EXPECT_NEAR(cm.op_seconds(op) / plain, 1.210, 1e-9);
  // The code's table entry at 2,048 tokens is the paper's, from its times.
  EXPECT_NEAR(attention_dropout_overhead(2048, false), (2.85 / 2.28 + 2.81 / 2.40) / 2 - 1, 5e-4);
  // Head dim 128: the random numbers are per score element, the GEMMs' work twice as much.
  op.k = 128;
  EXPECT_NEAR(cm.op_seconds(op) / plain, 1.105, 1e-9);
  // The backward at its own share (6.84 / 5.77 and 6.50 / 5.45: 18.9%), at its own rate.
  op.backward = true;
  op.k = 64;
  const double plain_back = 1e12 / (100e12 * 0.25);
  EXPECT_NEAR(cm.op_seconds(op), plain_back * 1.189, 1e-12);
  // Between measured lengths, linear in log2 of the length; outside them, the end values.
  EXPECT_NEAR(attention_dropout_overhead(1448, false), (0.213 + 0.210) / 2, 2e-4);
  EXPECT_DOUBLE_EQ(attention_dropout_overhead(512, true), 0.123);
  EXPECT_DOUBLE_EQ(attention_dropout_overhead(1 << 20, false), 0.247);
  EXPECT_DOUBLE_EQ(attention_dropout_overhead(0, false), 0.213);
  // A kernel that does not apply dropout, or whose head dim is not known, is not charged.
  op.dropout = false;
  EXPECT_NEAR(cm.op_seconds(op), plain_back, 1e-15);
  op.dropout = true;
  op.k = 0;
  EXPECT_NEAR(cm.op_seconds(op), plain_back, 1e-15);
}

TEST(CostCompute, AttentionDropoutCostsTheLaterKernelsMeasuredSharesOverTheHeadDim) {
  // FlashAttention-2 and cuDNN's fused attention (the FA3 class) were each timed with and without
  // dropout at head dimension 128, forward and backward together (docs/ACCURACY.md item 37).
  EXPECT_NEAR(kFlash2DropoutShareAt128, 0.0475, 1e-4);
  EXPECT_NEAR(kFusedDropoutShareAt128, 0.0337, 1e-4);
  Hardware hw = toy();
  hw.launch_overhead_ns = 0;
  hw.efficiency.attention = 0.4;
  hw.efficiency.attention_flash3 = 0.5;  // the entry has an FA3 rate
  model::OpCost op{"attn.core", model::OpKind::kAttention, 1e12};
  op.m = 2048;
  op.k = 128;
  const double plain = ComputeModel(hw, Precision::kBf16).op_seconds(op);
  op.dropout = true;
  const auto ratio = [&](const Hardware& h, AttentionKernel k, const model::OpCost& o) {
    return ComputeModel(h, Precision::kBf16, nullptr, k).op_seconds(o) / plain;
  };
  EXPECT_NEAR(ratio(hw, AttentionKernel::kFlash2, op), 0.728 / 0.695, 1e-12);
  EXPECT_NEAR(ratio(hw, AttentionKernel::kFlash3, op), 0.614 / 0.594, 1e-12);
  // The same share at every length and in the backward (one point, their sum measured).
  model::OpCost other = op;
  other.m = 65536;
  other.backward = true;
  EXPECT_NEAR(ratio(hw, AttentionKernel::kFlash2, other), 0.728 / 0.695, 1e-12);
  // At head dimension 64 the GEMMs do half the work per random number: twice the share.
  other = op;
  other.k = 64;
  EXPECT_NEAR(ratio(hw, AttentionKernel::kFlash2, other), 1 + 2 * kFlash2DropoutShareAt128, 1e-12);
  // Where the entry has no FA3 rate (the A100) that class runs as FA2 and is charged as FA2.
  Hardware no_fa3 = hw;
  no_fa3.efficiency.attention_flash3 = 0;
  EXPECT_NEAR(ratio(no_fa3, AttentionKernel::kFlash3, op), 0.728 / 0.695, 1e-12);
  // The shares by class, and none for a class that is not one fused kernel.
  EXPECT_NEAR(attention_dropout_share(AttentionKernel::kFlash1, op), 0.210 / 2, 1e-12);
  EXPECT_DOUBLE_EQ(attention_dropout_share(AttentionKernel::kUnfused, op), 0);
  EXPECT_DOUBLE_EQ(attention_dropout_share(AttentionKernel::kFusedSoftmax, op), 0);
  op.dropout = false;
  EXPECT_DOUBLE_EQ(attention_dropout_share(AttentionKernel::kFlash2, op), 0);
}

TEST(CostCompute, SustainedShareSlowsTensorCoreWorkNotStreaming) {
  // A GPU at its power limit runs tensor-core work at the catalog's sustained share of the burst
  // rates; memory-bound work is priced from bandwidth and does not change.
  Hardware hw = toy();
  hw.efficiency.sustained = 0.5;
  hw.launch_overhead_ns = 0;
  const ComputeModel burst(toy(), Precision::kBf16);
  const ComputeModel held(hw, Precision::kBf16);
  model::OpCost gemm{"g", model::OpKind::kGemm, 2.0 * 1280 * 1280 * 4096, 1e6, 1280, 1280, 4096};
  EXPECT_NEAR(held.op_seconds(gemm), gemm.flops / (100e12 * 0.8 * 0.5), 1e-15);
  model::OpCost attn{"a", model::OpKind::kAttention, 1e12, 1e6};
  EXPECT_NEAR(held.efficiency(attn), 0.5 * burst.efficiency(attn), 1e-15);
  model::OpCost add{"add", model::OpKind::kElementwise, 1e6, 8e9};
  EXPECT_NEAR(held.op_seconds(add), 8e9 / (1e12 * 0.5), 1e-12);
  // The Hopper entries carry the sustained share published for the H200 (ml-engineering's
  // MSMF / MAMF, catalog sources).
  EXPECT_DOUBLE_EQ(find_hardware("h100-sxm").efficiency.sustained, 0.848);
  EXPECT_DOUBLE_EQ(find_hardware("h200-sxm").efficiency.sustained, 0.848);
  // The A100's is the published steady rate of one shape over the model's burst rate for it:
  // cuBLAS 8192 x 8192 x 8192 on normally distributed bf16 inputs ran at 257-258 TFLOP/s
  // (thonking.ai, catalog sources); the model with the catalog's figures reproduces that.
  const Hardware a100 = find_hardware("a100-80gb");
  const ComputeModel a100_model(a100, Precision::kBf16);
  model::OpCost square{"g", model::OpKind::kGemm, 2.0 * 8192 * 8192 * 8192, 0, 8192, 8192, 8192};
  const double tflops = 312 * a100_model.efficiency(square);  // peak 312 TFLOP/s x efficiency
  EXPECT_GT(tflops, 256.5);
  EXPECT_LT(tflops, 258.5);
}

TEST(CostCompute, CalibratedPhaseReplacesTheOpModel) {
  Calibration cal;
  cal.phases[static_cast<size_t>(traces::Phase::kForward)].flops_per_s = 1e9;
  cal.phases[static_cast<size_t>(traces::Phase::kForward)].overhead_ns = 500;
  const ComputeModel cm(toy(), Precision::kBf16, &cal);
  std::vector<model::OpCost> ops = {{"a", model::OpKind::kGemm, 3e9, 0, 64, 64, 64},
                                    {"b", model::OpKind::kElementwise, 1e9, 0}};
  EXPECT_NEAR(cm.phase_seconds(ops, traces::Phase::kForward), 500e-9 + 4.0, 1e-12);
  // Phases it did not fit still use the op model.
  EXPECT_LT(cm.phase_seconds(ops, traces::Phase::kWeightGrad), 1.0);
}

// A zero-bubble run's profile fits I and W, no fused B: a 1F1B backward is its halves each at its
// own fit. The I fit alone for the whole backward priced W's GEMMs at I's scale (2x on a CPU).
TEST(CostCompute, AFusedBackwardFromAZeroBubbleProfileIsItsHalvesAtTheirOwnFits) {
  Calibration cal;
  cal.phases[static_cast<size_t>(traces::Phase::kInputGrad)].model_scale = 4.93;
  cal.phases[static_cast<size_t>(traces::Phase::kWeightGrad)].model_scale = 1.12;
  const ComputeModel plain(toy(), Precision::kBf16);
  const ComputeModel cm(toy(), Precision::kBf16, &cal);
  const std::vector<model::OpCost> input = {{"dx", model::OpKind::kGemm, 3e9, 0, 64, 64, 64}};
  const std::vector<model::OpCost> weight = {{"dw", model::OpKind::kGemm, 3e9, 0, 64, 64, 64}};
  const double i = plain.phase_seconds(input, traces::Phase::kInputGrad);
  const double w = plain.phase_seconds(weight, traces::Phase::kWeightGrad);
  EXPECT_NEAR(cm.backward_seconds(input, weight), 4.93 * i + 1.12 * w, 1e-12);
  // With a fused fit, or none, the backward's ops go together, as before.
  cal.phases[static_cast<size_t>(traces::Phase::kBackward)].model_scale = 2;
  const ComputeModel fused(toy(), Precision::kBf16, &cal);
  EXPECT_NEAR(fused.backward_seconds(input, weight), 2 * (i + w), 1e-12);
  EXPECT_NEAR(plain.backward_seconds(input, weight), i + w, 1e-12);
}

}  // namespace
}  // namespace meshscope::cost
