#include "sim/model/gpt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace meshscope::model {
namespace {

GptSpec gpt3() {
  GptSpec g;
  g.layers = 96;
  g.hidden = 12288;
  g.heads = 96;
  g.seq = 2048;
  g.vocab = 51200;
  return g;
}

LayerParallel par(int tp, bool sp, Recompute r, bool flash) {
  LayerParallel p;
  p.micro_batch = 1;
  p.seq = 2048;
  p.tp = tp;
  p.sequence_parallel = sp;
  p.recompute = r;
  p.flash_attention = flash;
  return p;
}

// The op named `name` among `ops`, or null.
const OpCost* find_op(const std::vector<OpCost>& ops, const std::string& name) {
  const auto it =
      std::find_if(ops.begin(), ops.end(), [&](const OpCost& o) { return o.name == name; });
  return it == ops.end() ? nullptr : &*it;
}

// Its bytes; a missing op fails the test.
double bytes_of(const std::vector<OpCost>& ops, const std::string& name) {
  const OpCost* op = find_op(ops, name);
  if (op == nullptr) ADD_FAILURE() << "no op " << name;
  return op == nullptr ? -1 : op->bytes;
}

// The collective named `name` among `cs`, or null.
const TpCollective* find(const std::vector<TpCollective>& cs, const std::string& name) {
  const auto it =
      std::find_if(cs.begin(), cs.end(), [&](const TpCollective& c) { return c.name == name; });
  return it == cs.end() ? nullptr : &*it;
}

TEST(Gpt, ModelFlopsAreMegatrons) {
  // Megatron-LM's model-FLOP count, as Korthikanti et al. 2022 use it for their MFU:
  // 72 B s L h^2 (1 + s / 6h + V / 12 L h) per iteration.
  const GptSpec g = gpt3();
  const GptModel m = build_gpt(g, par(8, true, Recompute::kSelective, false), 8);
  const double s = 2048, L = 96, h = 12288, V = 51200;
  const double megatron = 72 * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  EXPECT_NEAR(m.model_flops_per_microbatch / megatron, 1.0, 1e-12);
}

TEST(Gpt, Gpt3HasAbout175BParameters) {
  const GptModel m = build_gpt(gpt3(), par(1, false, Recompute::kNone, true), 1);
  EXPECT_NEAR(m.total_parameters / 1e9, 174.6, 0.5);
}

TEST(Gpt, ActivationMemoryFollowsKorthikanti) {
  TransformerShape sh{12288, 96, 96, 0, false, 0, 1, 0};
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  // Eq. 1 (no parallelism, no recomputation): sbh (34 + 5 a s / h).
  EXPECT_DOUBLE_EQ(transformer_layer(sh, par(1, false, Recompute::kNone, false)).activation_bytes,
                   std::floor(sbh * (34 + 5 * a * s / h)));
  // Eq. 2 (tensor parallel): sbh (10 + 24 / t + 5 a s / (h t)).
  EXPECT_NEAR(transformer_layer(sh, par(8, false, Recompute::kNone, false)).activation_bytes,
              sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1);
  // Table 2, sequence parallel + selective recomputation: 34 sbh / t.
  EXPECT_NEAR(transformer_layer(sh, par(8, true, Recompute::kSelective, false)).activation_bytes,
              34 * sbh / t, 1);
  // Full recomputation keeps the layer input: 2 sbh.
  EXPECT_NEAR(transformer_layer(sh, par(8, false, Recompute::kFull, false)).activation_bytes,
              2 * sbh, 1);
}

TEST(Gpt, FullRecomputationRepeatsTheForwardInTheBackward) {
  TransformerShape sh{4096, 32, 32, 0, false, 0, 1, 0};
  const LayerCost none = transformer_layer(sh, par(2, false, Recompute::kNone, true));
  const LayerCost full = transformer_layer(sh, par(2, false, Recompute::kFull, true));
  EXPECT_NEAR(total_flops(full.input_grad) - total_flops(none.input_grad),
              total_flops(none.forward), 1);
  EXPECT_EQ(full.comm_backward.size(), none.comm_backward.size() + none.comm_forward.size());
  EXPECT_DOUBLE_EQ(total_flops(full.forward), total_flops(none.forward));
}

// Megatron-core's selective recomputation checkpoints the core attention whatever kernel runs it:
// under flash attention the kernel's forward runs again before its backward, and its softmax
// statistics are not kept. Megatron-LM's (the default) leaves a flash kernel as it is.
TEST(Gpt, SelectiveRecomputationRerunsTheFlashKernelWhereTheStackCheckpointsIt) {
  TransformerShape sh{6144, 48, 8, 24576, false, 0, 1, 0, true};
  const LayerCost none = transformer_layer(sh, par(4, true, Recompute::kNone, true));
  LayerParallel p = par(4, true, Recompute::kSelective, true);
  const LayerCost legacy = transformer_layer(sh, p);
  EXPECT_EQ(legacy.input_grad.size(), none.input_grad.size());
  EXPECT_EQ(legacy.activation_bytes, none.activation_bytes);
  p.selective_recomputes_flash = true;
  p.attention_dropout = true;
  const LayerCost core = transformer_layer(sh, p);
  ASSERT_EQ(core.input_grad.size(), none.input_grad.size() + 1);
  const OpCost* again = find_op(core.input_grad, "recompute.attn.core");
  const OpCost* forward = find_op(core.forward, "attn.core");
  ASSERT_NE(again, nullptr);
  ASSERT_NE(forward, nullptr);
  EXPECT_DOUBLE_EQ(again->flops, forward->flops);
  EXPECT_DOUBLE_EQ(again->bytes, forward->bytes);
  EXPECT_EQ(again->k, forward->k);
  EXPECT_TRUE(again->dropout);  // the kernel draws its dropout again
  EXPECT_FALSE(again->backward);
  // One fp32 statistic a query row: 2,048 tokens of 48 / 4 heads.
  EXPECT_EQ(none.activation_bytes - core.activation_bytes, int64_t{2048} * 12 * 4);
  // Nothing else changes; without flash attention the unfused scores are recomputed as before.
  EXPECT_EQ(core.forward.size(), none.forward.size());
  EXPECT_EQ(core.comm_backward.size(), none.comm_backward.size());
  LayerParallel unfused = par(4, true, Recompute::kSelective, false);
  const size_t before = transformer_layer(sh, unfused).input_grad.size();
  unfused.selective_recomputes_flash = true;
  EXPECT_EQ(transformer_layer(sh, unfused).input_grad.size(), before);
}

TEST(Gpt, EarlyStopEndsTheRecomputationBeforeTheLayersLastGemm) {
  // Llama 2 70B's layer (GQA 64/8, SwiGLU 28672) over tp 2 without sequence parallelism. PyTorch's
  // non-reentrant checkpoint stops once the last saved tensor is rebuilt: fc2 saves its input and
  // weight before it runs, so fc2, the all-reduce after it and the residual add are not run again;
  // everything before them is.
  TransformerShape sh{8192, 64, 8, 28672, true, 0, 1, 0, true};
  LayerParallel stop = par(2, false, Recompute::kFull, true);
  stop.recompute_early_stop = true;
  const LayerCost none = transformer_layer(sh, par(2, false, Recompute::kNone, true));
  const LayerCost whole = transformer_layer(sh, par(2, false, Recompute::kFull, true));
  const LayerCost early = transformer_layer(sh, stop);
  double before_fc2 = 0;
  for (const OpCost& op : none.forward)
    if (op.name != "mlp.fc2" && op.name != "mlp.dropout_residual") before_fc2 += op.flops;
  EXPECT_NEAR(total_flops(early.input_grad) - total_flops(none.input_grad), before_fc2, 1);
  const double fc2 = 2.0 * 2048 * (28672 / 2) * 8192;
  EXPECT_NEAR(total_flops(whole.input_grad) - total_flops(early.input_grad),
              fc2 + 2.0 * 2048 * 8192, 1);
  ASSERT_EQ(none.comm_forward.size(), 2u);  // attn.tp_out, mlp.tp_out
  ASSERT_EQ(early.comm_backward.size(), none.comm_backward.size() + 1);
  EXPECT_EQ(early.comm_backward.front().name, "attn.tp_out");
  EXPECT_EQ(early.activation_bytes, whole.activation_bytes);
  EXPECT_DOUBLE_EQ(total_flops(early.forward), total_flops(none.forward));
  EXPECT_DOUBLE_EQ(total_flops(early.weight_grad), total_flops(none.weight_grad));
  // A mixture-of-experts layer's combine saves the experts' outputs: its forward runs whole.
  TransformerShape moe{4096, 32, 8, 14336, true, 8, 2, 0, true};
  EXPECT_DOUBLE_EQ(
      total_flops(transformer_layer(moe, stop).input_grad),
      total_flops(transformer_layer(moe, par(2, false, Recompute::kFull, true)).input_grad));
}

TEST(Gpt, OpSelectiveRecomputationRerunsEveryOtherMatmulAndTheElementwiseOps) {
  // Llama 3 8B's layer (GQA 32/8 heads, SwiGLU 14336): torchtitan's per-op policy recomputes
  // wk (h x kv d), wo (h x h) and w3 (h x ffn) and every norm, rotary and activation pass.
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0, true};
  const LayerCost none = transformer_layer(sh, par(1, false, Recompute::kNone, true));
  const LayerCost op = transformer_layer(sh, par(1, false, Recompute::kOpSelective, true));
  const double tokens = 2048, h = 4096, kvd = 8 * 128, f = 14336;
  EXPECT_NEAR(
      total_flops(op.input_grad) - total_flops(none.input_grad),
      2 * tokens * h * (kvd + h + f) +
          [&] {
            double elementwise = 0;
            for (const OpCost& o : none.forward)
              if (o.kind != OpKind::kGemm && o.kind != OpKind::kAttention) elementwise += o.flops;
            return elementwise;
          }(),
      1e3);
  // The attention kernel's output is saved: no attention runs again.
  for (const OpCost& o : op.input_grad) EXPECT_NE(o.name, "recompute.attn.core") << o.name;
  // Under the checkpoint's early stop the residual add after w2 is not run again either.
  LayerParallel stop = par(1, false, Recompute::kOpSelective, true);
  stop.recompute_early_stop = true;
  const LayerCost early = transformer_layer(sh, stop);
  EXPECT_NEAR(total_flops(op.input_grad) - total_flops(early.input_grad), 2 * tokens * h, 1e-3);
  for (const OpCost& o : early.input_grad)
    EXPECT_NE(o.name, "recompute.mlp.dropout_residual") << o.name;
  EXPECT_DOUBLE_EQ(total_flops(op.forward), total_flops(none.forward));
  EXPECT_DOUBLE_EQ(total_flops(op.weight_grad), total_flops(none.weight_grad));
  // It keeps the layer input, wq, wv, w1, w2 and attention outputs: less than keeping
  // everything, more than the layer input alone.
  const LayerCost full = transformer_layer(sh, par(1, false, Recompute::kFull, true));
  EXPECT_LT(op.activation_bytes, none.activation_bytes);
  EXPECT_GT(op.activation_bytes, 4 * full.activation_bytes);
}

TEST(Gpt, FlashAttentionIsPricedAtTheKernelsHeadDimension) {
  // GPT-3 760M: 16 heads of 96. A kernel compiled for 128 computes 128 columns, a third more
  // tensor-core work in the forward and the backward; its memory traffic and the model FLOPs
  // (what MFU counts) stay those of 96.
  TransformerShape sh{1536, 16, 16, 0, false, 0, 1, 0};
  LayerParallel own = par(1, false, Recompute::kNone, true);
  LayerParallel wide = own;
  wide.attention_head_dim = 128;
  const LayerCost a = transformer_layer(sh, own), b = transformer_layer(sh, wide);
  auto core = [](const std::vector<OpCost>& ops, const char* name) {
    for (const OpCost& op : ops)
      if (op.name == name) return op;
    ADD_FAILURE() << name;
    return OpCost{};
  };
  EXPECT_DOUBLE_EQ(core(b.forward, "attn.core").flops,
                   core(a.forward, "attn.core").flops * 128 / 96);
  EXPECT_DOUBLE_EQ(core(b.input_grad, "attn.core.grad").flops,
                   core(a.input_grad, "attn.core.grad").flops * 128 / 96);
  EXPECT_DOUBLE_EQ(core(b.forward, "attn.core").bytes, core(a.forward, "attn.core").bytes);
  EXPECT_DOUBLE_EQ(b.model_flops, a.model_flops);
  // A narrower kernel head never shrinks the work.
  LayerParallel narrow = own;
  narrow.attention_head_dim = 64;
  EXPECT_DOUBLE_EQ(core(transformer_layer(sh, narrow).forward, "attn.core").flops,
                   core(a.forward, "attn.core").flops);
}

// docs/ACCURACY.md item 35: a fused attention kernel's rate depends on the query tokens of one
// sequence, which the ops carry (a context-parallel rank holds seq / cp of them), recomputed or
// not.
TEST(Gpt, AttentionOpsCarryTheQueryTokensOfOneSequence) {
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0};
  LayerParallel p = par(1, false, Recompute::kFull, true);
  p.micro_batch = 2;
  p.seq = 8192;
  for (int cp : {1, 2, 8}) {
    p.cp = cp;
    const LayerCost c = transformer_layer(sh, p);
    const OpCost* fwd = find_op(c.forward, "attn.core");
    const OpCost* bwd = find_op(c.input_grad, "attn.core.grad");
    const OpCost* again = find_op(c.input_grad, "recompute.attn.core");
    ASSERT_TRUE(fwd && bwd && again) << cp;
    EXPECT_EQ(fwd->m, 8192 / cp);
    EXPECT_EQ(bwd->m, 8192 / cp);
    EXPECT_EQ(again->m, 8192 / cp);
  }
}

// Each fused attention kernel, recomputed or not, carries the head dimension it computes at and
// whether it applies dropout (what the compute model charges dropout by, item 36).
TEST(Gpt, AttentionOpsCarryTheirKernelsHeadDimAndDropout) {
  TransformerShape sh{1536, 16, 16, 6144, false, 0, 1, 0};  // heads of 96
  LayerParallel p = par(1, false, Recompute::kFull, true);
  for (bool dropout : {false, true}) {
    for (int64_t kernel : {0, 128}) {
      p.attention_dropout = dropout;
      p.attention_head_dim = kernel;
      const LayerCost c = transformer_layer(sh, p);
      for (const OpCost* op :
           {find_op(c.forward, "attn.core"), find_op(c.input_grad, "attn.core.grad"),
            find_op(c.input_grad, "recompute.attn.core")}) {
        ASSERT_NE(op, nullptr);
        EXPECT_EQ(op->k, kernel > 0 ? kernel : 96) << op->name;
        EXPECT_EQ(op->dropout, dropout) << op->name;
      }
    }
  }
}

TEST(Gpt, SequenceParallelTradesAllReducesForGatherAndScatter) {
  TransformerShape sh{4096, 32, 32, 0, false, 0, 1, 0};
  const LayerCost tp = transformer_layer(sh, par(4, false, Recompute::kNone, true));
  const LayerCost sp = transformer_layer(sh, par(4, true, Recompute::kNone, true));
  ASSERT_EQ(tp.comm_forward.size(), 2u);
  EXPECT_EQ(tp.comm_forward[0].op, CommOp::kAllReduce);
  ASSERT_EQ(sp.comm_forward.size(), 4u);
  EXPECT_EQ(sp.comm_forward[0].op, CommOp::kAllGather);
  EXPECT_EQ(sp.comm_forward[1].op, CommOp::kReduceScatter);
  EXPECT_LT(sp.activation_bytes, tp.activation_bytes);
}

// Megatron-core's all-to-all token dispatcher under tp and sequence parallelism: each rank routes
// its own T / t tokens (the all-to-all over ep carries those), an all-gather over tp gives it every
// token routed to its experts, a reduce-scatter takes them back, and no gather of the layer's input
// or scatter of its output stands beside them (they had: every tp rank sent all T tokens, t times
// the traffic of the stack's).
TEST(Gpt, ExpertsDispatchEachTensorParallelRanksOwnTokens) {
  TransformerShape sh{1024, 16, 16, 4096, false, 8, 2, 0};
  LayerParallel p = par(8, true, Recompute::kNone, true);
  p.seq = 1024;
  p.ep = 4;
  const LayerCost L = transformer_layer(sh, p);
  const double T = 1024, t = 8, k = 2, h = 1024, e = 2;
  const TpCollective* dispatch = find(L.comm_forward, "moe.dispatch");
  const TpCollective* combine = find(L.comm_forward, "moe.combine");
  const TpCollective* gather = find(L.comm_forward, "moe.tp_gather");
  const TpCollective* scatter = find(L.comm_forward, "moe.tp_scatter");
  ASSERT_TRUE(dispatch && combine && gather && scatter);
  EXPECT_EQ(dispatch->bytes, T / t * k * h * e);
  EXPECT_EQ(combine->bytes, T / t * k * h * e);
  EXPECT_EQ(gather->op, CommOp::kAllGather);
  EXPECT_EQ(gather->bytes, T * k * h * e);
  EXPECT_EQ(scatter->op, CommOp::kReduceScatter);
  EXPECT_EQ(find(L.comm_forward, "mlp.tp_in"), nullptr);
  EXPECT_EQ(find(L.comm_forward, "mlp.tp_out"), nullptr);
  // Each forward collective has its backward counterpart.
  EXPECT_NE(find(L.comm_backward, "moe.dispatch.grad"), nullptr);
  EXPECT_NE(find(L.comm_backward, "moe.combine.grad"), nullptr);
  EXPECT_NE(find(L.comm_backward, "moe.tp_gather"), nullptr);
  EXPECT_NE(find(L.comm_backward, "moe.tp_scatter"), nullptr);
  // The router runs on the rank's own tokens.
  const OpCost* router = find_op(L.forward, "moe.router");
  ASSERT_NE(router, nullptr);
  EXPECT_DOUBLE_EQ(router->flops, 2 * (T / t) * h * 8);
}

// The combine weights the experts' returned outputs by the router's probabilities and keeps them
// for the probabilities' gradient: T k h elements more a routed unit than fc1's and fc2's inputs.
TEST(Gpt, TheCombineKeepsTheExpertsOutputs) {
  LayerParallel p = par(1, false, Recompute::kNone, true);
  p.seq = 1024;
  const auto kept = [&](int64_t top_k) {
    TransformerShape sh{1024, 16, 16, 4096, false, 8, top_k, 0};
    return transformer_layer(sh, p).activation_bytes;
  };
  const double T = 1024, h = 1024, f = 4096, e = 2;
  EXPECT_EQ(kept(2) - kept(1), T * e * (2 * h + 2 * f));
  EXPECT_EQ(kept(4) - kept(2), 2 * T * e * (2 * h + 2 * f));
}

// Context parallelism exchanges K and V as the attention kernel takes them: where the stack repeats
// them to the query heads' count first (torchtitan's repeat_kv before SDPA), the ring moves every
// head; a stack that hands the kernel grouped K and V moves kv heads.
TEST(Gpt, ContextParallelExchangesTheKvHeadsTheKernelTakes) {
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0};
  LayerParallel p = par(1, false, Recompute::kNone, true);
  p.seq = 8192;
  p.cp = 8;
  const double T = 8192.0 / 8, d = 128, e = 2;
  const auto exchanged = [&](bool expand) {
    p.gqa_expand = expand;
    const LayerCost layer = transformer_layer(sh, p);  // kept: find() points into it
    const TpCollective* kv = find(layer.comm_forward, "attn.cp_kv");
    return kv == nullptr ? -1.0 : static_cast<double>(kv->bytes);
  };
  EXPECT_EQ(exchanged(false), 2 * T * 8 * 8 * d * e);
  EXPECT_EQ(exchanged(true), 2 * T * 8 * 32 * d * e);
}

// Op-level selective recomputation of a layer with experts saves what it saves of the attention
// block (it had charged the recomputation's time and kept the whole layer).
TEST(Gpt, OpSelectiveRecomputationOfAnExpertLayerSavesItsAttentionsMemory) {
  TransformerShape sh{1024, 16, 16, 4096, false, 8, 2, 0};
  LayerParallel p = par(1, false, Recompute::kNone, true);
  p.seq = 1024;
  const LayerCost kept = transformer_layer(sh, p);
  p.recompute = Recompute::kOpSelective;
  const LayerCost op = transformer_layer(sh, p);
  EXPECT_LT(op.activation_bytes, kept.activation_bytes);
  EXPECT_NE(find_op(op.input_grad, "recompute.attn.proj"), nullptr);
}

TEST(Gpt, MegatronsColumnParallelBackwardRunsItsCollectivesBesideTheGemms) {
  // Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication: the input gradient's
  // reduce-scatter (all-reduce without sequence parallelism) beside the weight-gradient GEMM of
  // the same linear, and under sequence parallelism the split input gathered again beside the
  // input-gradient GEMM.
  TransformerShape sh{4096, 32, 32, 0, false, 0, 1, 0};
  LayerParallel on = par(4, true, Recompute::kNone, true);
  on.tp_backward_overlap = true;
  const LayerCost sp = transformer_layer(sh, on);
  for (const std::string linear : {"attn.qkv", "mlp.fc1"}) {
    const std::string entry = linear == "attn.qkv" ? "attn.tp_in" : "mlp.tp_in";
    SCOPED_TRACE(entry);
    const TpCollective* rs = find(sp.comm_backward, entry);
    ASSERT_NE(rs, nullptr);
    EXPECT_EQ(rs->op, CommOp::kReduceScatter);
    ASSERT_TRUE(rs->beside.has_value());
    EXPECT_EQ(rs->beside->name, linear + ".wgrad");
    EXPECT_TRUE(rs->beside_weight_grad);
    const TpCollective* again = find(sp.comm_backward, entry + ".regather");
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->op, CommOp::kAllGather);
    EXPECT_EQ(again->bytes, rs->bytes);
    ASSERT_TRUE(again->beside.has_value());
    EXPECT_EQ(again->beside->name, linear + ".dgrad");
    EXPECT_FALSE(again->beside_weight_grad);
  }
  // The row-parallel linears' backward gathers feed their own input-gradient GEMM: alone.
  for (const char* exit : {"attn.tp_out", "mlp.tp_out"}) {
    const TpCollective* gather = find(sp.comm_backward, exit);
    ASSERT_NE(gather, nullptr) << exit;
    EXPECT_FALSE(gather->beside.has_value()) << exit;
  }
  // Without sequence parallelism: the all-reduce beside the weight gradient, nothing gathered.
  LayerParallel no_sp = par(4, false, Recompute::kNone, true);
  no_sp.tp_backward_overlap = true;
  const LayerCost tp = transformer_layer(sh, no_sp);
  ASSERT_EQ(tp.comm_backward.size(), 2u);
  for (const TpCollective& c : tp.comm_backward) {
    EXPECT_EQ(c.op, CommOp::kAllReduce);
    ASSERT_TRUE(c.beside.has_value());
    EXPECT_TRUE(c.beside_weight_grad);
  }
  // Off (the default): every collective alone, as before.
  const LayerCost off = transformer_layer(sh, par(4, true, Recompute::kNone, true));
  EXPECT_EQ(off.comm_backward.size(), sp.comm_backward.size() - 2);
  for (const TpCollective& c : off.comm_backward) EXPECT_FALSE(c.beside.has_value()) << c.name;
}

TEST(Gpt, UserbuffersPutEveryTpCollectiveOfALayerBesideAGemm) {
  // Transformer Engine's userbuffers (Megatron-core --tp-comm-overlap) with its default methods:
  // a ring exchange overlaps (tp - 1) / tp of its GEMM, a pipeline of 4 chunks leaves its last
  // chunk's reduce-scatter after the GEMM, a bulk overlap runs beside the whole GEMM.
  TransformerShape sh{4096, 32, 32, 0, false, 0, 1, 0};
  TpOverlapCfgs cfgs;
  for (size_t i = 0; i < kTpOverlapGemms.size(); ++i) {
    const std::string_view g = kTpOverlapGemms[i];
    const bool ring = g == "qkv_fprop" || g == "fc1_fprop" || g == "proj_dgrad" || g == "fc2_dgrad";
    const bool pipeline = g == "proj_fprop" || g == "fc2_fprop";
    cfgs[i] = {ring       ? TpOverlapCfg::Method::kRingExchange
               : pipeline ? TpOverlapCfg::Method::kPipeline
                          : TpOverlapCfg::Method::kBulk,
               ring ? 1 : 16 + static_cast<int>(i), pipeline ? 4 : 1};
  }
  LayerParallel p = par(4, true, Recompute::kNone, true);
  p.tp_comm_overlap = cfgs;
  const LayerCost L = transformer_layer(sh, p);
  auto sms_of = [&](std::string_view gemm) {
    const auto at = std::find(kTpOverlapGemms.begin(), kTpOverlapGemms.end(), gemm);
    return cfgs[static_cast<size_t>(at - kTpOverlapGemms.begin())].num_sm;
  };
  struct Want {
    bool forward;
    const char* collective;
    const char* gemm;
    const char* ub;
    double gemm_share, tail_share;
  };
  for (const Want& w :
       std::vector<Want>{{true, "attn.tp_in", "attn.qkv", "qkv_fprop", 0.75, 0},
                         {true, "mlp.tp_in", "mlp.fc1", "fc1_fprop", 0.75, 0},
                         {true, "attn.tp_out", "attn.proj", "proj_fprop", 0.75, 0.25},
                         {true, "mlp.tp_out", "mlp.fc2", "fc2_fprop", 0.75, 0.25},
                         {false, "attn.tp_out", "attn.proj.dgrad", "proj_dgrad", 0.75, 0},
                         {false, "mlp.tp_out", "mlp.fc2.dgrad", "fc2_dgrad", 0.75, 0},
                         {false, "attn.tp_in.regather", "attn.qkv.dgrad", "qkv_dgrad", 1, 0},
                         {false, "attn.tp_in", "attn.qkv.wgrad", "qkv_wgrad", 1, 0},
                         {false, "mlp.tp_in.regather", "mlp.fc1.dgrad", "fc1_dgrad", 1, 0},
                         {false, "mlp.tp_in", "mlp.fc1.wgrad", "fc1_wgrad", 1, 0}}) {
    SCOPED_TRACE(w.ub);
    const TpCollective* found = find(w.forward ? L.comm_forward : L.comm_backward, w.collective);
    ASSERT_NE(found, nullptr);
    const TpCollective& c = *found;
    ASSERT_TRUE(c.beside.has_value());
    EXPECT_EQ(c.beside->name, w.gemm);
    EXPECT_EQ(c.sms, sms_of(w.ub));
    EXPECT_DOUBLE_EQ(c.gemm_share, w.gemm_share);
    EXPECT_DOUBLE_EQ(c.tail_share, w.tail_share);
    EXPECT_EQ(c.beside_weight_grad, std::string_view(w.ub).ends_with("_wgrad"));
  }
  // Without sequence parallelism userbuffers do not run (Megatron-LM refuses the pair).
  LayerParallel no_sp = par(4, false, Recompute::kNone, true);
  no_sp.tp_comm_overlap = cfgs;
  for (const TpCollective& c : transformer_layer(sh, no_sp).comm_forward)
    EXPECT_FALSE(c.beside.has_value()) << c.name;
}

// Each elementwise op's gradient moves the profile's count where it states one, else the rule: 1.5
// times the forward for norms and activations, as much as the forward for residual adds and rotary
// embeddings. torchtitan's eager RMSNorm is 18 passes forward and 46 back (its profile's sources).
TEST(Gpt, ElementwiseGradientsMoveTheProfilesCountElseTheRule) {
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0, true};
  LayerParallel p = par(1, false, Recompute::kNone, true);
  p.passes.norm = 18;
  p.passes.activation = 2.5;
  p.passes.rope = 10;
  const auto& bytes = bytes_of;
  const LayerCost rule = transformer_layer(sh, p);
  EXPECT_DOUBLE_EQ(bytes(rule.input_grad, "ln1.grad"), 1.5 * bytes(rule.forward, "ln1"));
  EXPECT_DOUBLE_EQ(bytes(rule.input_grad, "mlp.act.grad"), 1.5 * bytes(rule.forward, "mlp.act"));
  EXPECT_DOUBLE_EQ(bytes(rule.input_grad, "attn.rope.grad"), bytes(rule.forward, "attn.rope"));
  EXPECT_DOUBLE_EQ(bytes(rule.input_grad, "mlp.dropout_residual.grad"),
                   bytes(rule.forward, "mlp.dropout_residual"));

  p.passes.norm_grad = 46;
  p.passes.activation_grad = 4.5;
  p.passes.rope_grad = 20;
  const LayerCost stated = transformer_layer(sh, p);
  for (const char* norm : {"ln1", "ln2"})
    EXPECT_DOUBLE_EQ(bytes(stated.input_grad, std::string(norm) + ".grad"),
                     bytes(stated.forward, norm) * 46 / 18)
        << norm;
  EXPECT_DOUBLE_EQ(bytes(stated.input_grad, "mlp.act.grad"),
                   bytes(stated.forward, "mlp.act") * 4.5 / 2.5);
  EXPECT_DOUBLE_EQ(bytes(stated.input_grad, "attn.rope.grad"),
                   2 * bytes(stated.forward, "attn.rope"));
  // Unstated: the rule still.
  EXPECT_DOUBLE_EQ(bytes(stated.input_grad, "attn.dropout_residual.grad"),
                   bytes(stated.forward, "attn.dropout_residual"));
  // The forward and what the backward saves do not change.
  EXPECT_DOUBLE_EQ(bytes(stated.forward, "ln1"), bytes(rule.forward, "ln1"));
  EXPECT_EQ(stated.activation_bytes, rule.activation_bytes);

  // The model's last norm follows its layers' count.
  GptSpec g = gpt3();
  g.layers = 2;
  LayerParallel q = par(1, false, Recompute::kNone, true);
  q.passes.norm = 18;
  const GptModel plain = build_gpt(g, q, 1);
  q.passes.norm_grad = 46;
  const GptModel eager = build_gpt(g, q, 1);
  auto last = [](const GptModel& m) -> const StageCost& { return m.stages.back().cost; };
  EXPECT_DOUBLE_EQ(bytes(last(eager).input_grad, "final_norm.grad"),
                   bytes(last(plain).input_grad, "final_norm.grad") * 46 / 27);
}

// A stack whose attention splits one qkv projection's output joins the three gradients with a copy
// in the backward (split's backward, at::cat): read and written once, (heads + 2 kv heads) x
// head_dim / tp per token. The forward's split is a view: nothing there.
TEST(Gpt, SplittingOneQkvProjectionCopiesItsGradientsTogether) {
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0, true};
  LayerParallel p = par(2, false, Recompute::kNone, true);
  const LayerCost apart = transformer_layer(sh, p);
  p.qkv_split_grad = true;
  const LayerCost split = transformer_layer(sh, p);
  ASSERT_EQ(split.input_grad.size(), apart.input_grad.size() + 1);
  const OpCost* join = find_op(split.input_grad, "attn.qkv_split.grad");
  ASSERT_NE(join, nullptr);
  const double tokens = 2048, width = (32 + 2 * 8) * 128 / 2;
  EXPECT_DOUBLE_EQ(join->bytes, 2 * 2 * tokens * width);  // bf16, read + write
  EXPECT_EQ(split.forward.size(), apart.forward.size());
  EXPECT_EQ(split.activation_bytes, apart.activation_bytes);
}

// Memory follows the stack's layers: no dropout, no masks (2 bytes a token and hidden element per
// layer); a stack whose tensor-parallel linears see the all-gathered input keeps it whole.
TEST(Gpt, DropoutMasksAndGatheredInputsFollowTheStack) {
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0, true};
  LayerParallel p = par(4, true, Recompute::kNone, true);
  const double tokens = 2048, h = 4096, t = 4, e = 2;
  const int64_t megatron = transformer_layer(sh, p).activation_bytes;
  p.hidden_dropout = false;
  const int64_t no_dropout = transformer_layer(sh, p).activation_bytes;
  EXPECT_EQ(megatron - no_dropout, static_cast<int64_t>(2 * tokens / t * h));
  p.tp_saves_gathered_input = true;
  const int64_t gathered = transformer_layer(sh, p).activation_bytes;
  EXPECT_EQ(gathered - no_dropout, static_cast<int64_t>(2 * (tokens - tokens / t) * h * e));
  // Without sequence parallelism the inputs are whole either way.
  LayerParallel q = par(4, false, Recompute::kNone, true);
  const int64_t whole = transformer_layer(sh, q).activation_bytes;
  q.tp_saves_gathered_input = true;
  EXPECT_EQ(transformer_layer(sh, q).activation_bytes, whole);
  // Full recomputation keeps the layer input only: neither changes it.
  LayerParallel f = par(4, true, Recompute::kFull, true);
  const int64_t full = transformer_layer(sh, f).activation_bytes;
  f.hidden_dropout = false;
  f.tp_saves_gathered_input = true;
  EXPECT_EQ(transformer_layer(sh, f).activation_bytes, full);
}

// With grouped-query attention, a stack whose kernel takes no grouped K and V repeats them to the
// query heads' count: a copy forward (read kv heads, write heads) and its sum back, and the kernel
// reads and saves the repeated K and V. Without grouping there is nothing to repeat.
TEST(Gpt, RepeatingKvForAKernelWithoutGroupsCopiesThemEachWay) {
  TransformerShape sh{4096, 32, 8, 14336, true, 0, 1, 0, true};
  LayerParallel p = par(1, false, Recompute::kNone, true);
  const LayerCost grouped = transformer_layer(sh, p);
  p.gqa_expand = true;
  const LayerCost repeated = transformer_layer(sh, p);
  const auto& op = find_op;
  const double tokens = 2048, d = 128, e = 2;
  const OpCost* copy = op(repeated.forward, "attn.repeat_kv");
  ASSERT_NE(copy, nullptr);
  EXPECT_DOUBLE_EQ(copy->bytes, e * tokens * 2 * d * (32 + 8));  // K and V: read 8 heads, write 32
  const OpCost* sum = op(repeated.input_grad, "attn.repeat_kv.grad");
  ASSERT_NE(sum, nullptr);
  EXPECT_DOUBLE_EQ(sum->bytes, copy->bytes);
  // Its own rule, not the rotary embedding's stated count.
  p.passes.rope = 10;
  p.passes.rope_grad = 20;
  const LayerCost rotary_stated = transformer_layer(sh, p);
  EXPECT_DOUBLE_EQ(op(rotary_stated.input_grad, "attn.repeat_kv.grad")->bytes, copy->bytes);
  EXPECT_EQ(op(grouped.forward, "attn.repeat_kv"), nullptr);
  EXPECT_DOUBLE_EQ(
      op(repeated.forward, "attn.core")->bytes - op(grouped.forward, "attn.core")->bytes,
      e * tokens * 2 * (32 - 8) * d);
  EXPECT_EQ(repeated.activation_bytes - grouped.activation_bytes,
            static_cast<int64_t>(e * tokens * 2 * (32 - 8) * d));
  TransformerShape mha{4096, 32, 32, 14336, true, 0, 1, 0, true};
  EXPECT_EQ(op(transformer_layer(mha, p).forward, "attn.repeat_kv"), nullptr);
}

TEST(Gpt, LayersSplitLikeLlama3) {
  const auto split = split_layers(126, 16);
  EXPECT_EQ(split.front(), 7);
  EXPECT_EQ(split.back(), 7);
  EXPECT_EQ(split[5], 8);
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), 126);
  EXPECT_THROW(split_layers(3, 4), std::invalid_argument);
}

TEST(Gpt, ShapesThatDoNotDivideAreRejected) {
  GptSpec g;  // 24 heads
  try {
    build_gpt(g, par(16, false, Recompute::kNone, true), 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
  }
}

TEST(Gpt, StagesCarryEmbeddingAndLogitsAtTheEnds) {
  const GptModel m = build_gpt(gpt3(), par(8, true, Recompute::kSelective, false), 8);
  ASSERT_EQ(m.stages.size(), 8u);
  EXPECT_EQ(m.stages.front().cost.input_bytes, 0);
  EXPECT_EQ(m.stages.back().cost.output_bytes, 0);
  EXPECT_EQ(m.stages[3].cost.output_bytes,
            2048 * 12288 * 2 / 8);  // SP: a tp shard of the activation
  // Middle stages are alike; the last one also runs the logits.
  EXPECT_EQ(m.stages[2].cost.forward_flops(), m.stages[5].cost.forward_flops());
  EXPECT_GT(m.stages[7].cost.forward_flops(), m.stages[5].cost.forward_flops());
}

TEST(Gpt, TheLastStageKeepsWhatTheLossSavesOfEachLogit) {
  // The loss keeps loss_saved_bytes of each of the stage's logits (a tp shard of the vocabulary)
  // until its backward: an fp32 softmax by default, the bf16 logits under a fused kernel.
  LayerParallel p = par(8, true, Recompute::kSelective, false);
  const GptModel fp32 = build_gpt(gpt3(), p, 8);
  p.loss_saved_bytes = 2;
  const GptModel bf16 = build_gpt(gpt3(), p, 8);
  EXPECT_EQ(fp32.stages[7].cost.activation_bytes - bf16.stages[7].cost.activation_bytes,
            int64_t{2048} * 51200 / 8 * 2);
  EXPECT_EQ(fp32.stages[3].cost.activation_bytes, bf16.stages[3].cost.activation_bytes);
}

TEST(Gpt, TheLastStageHoldsTheLossWorkingSetBeyondWhatItSaves) {
  // While the loss runs it holds loss_peak_bytes of each of the stage's logits, the saved ones
  // among them: the rest is working memory of the last stage alone, not kept per microbatch.
  LayerParallel p = par(8, true, Recompute::kSelective, false);
  p.loss_saved_bytes = 4;
  p.loss_peak_bytes = 12;
  const GptModel eager = build_gpt(gpt3(), p, 8);
  EXPECT_EQ(eager.stages[7].cost.working_bytes, int64_t{2048} * 51200 / 8 * (12 - 4));
  for (int s = 0; s < 7; ++s) EXPECT_EQ(eager.stages[s].cost.working_bytes, 0) << s;
  p.loss_peak_bytes = 4;  // a loss whose gradient overwrites what it saved
  const GptModel in_place = build_gpt(gpt3(), p, 8);
  EXPECT_EQ(in_place.stages[7].cost.working_bytes, 0);
  EXPECT_EQ(eager.stages[7].cost.activation_bytes, in_place.stages[7].cost.activation_bytes);
}

TEST(Gpt, ScatterGatherSendsATpShardBetweenStagesAndGathersIt) {
  // Without sequence parallelism every tp rank holds the whole stage output. Megatron-LM's
  // scatter/gather sends 1/tp of it from each rank and all-gathers it on the receiving stage:
  // the forward of every stage but the first, the backward of every stage but the last.
  LayerParallel p = par(8, false, Recompute::kFull, false);
  const int64_t whole = 2048 * 12288 * 2;
  const GptModel plain = build_gpt(gpt3(), p, 8);
  EXPECT_EQ(plain.stages[3].cost.output_bytes, whole);
  p.p2p_scatter_gather = true;
  const GptModel split = build_gpt(gpt3(), p, 8);
  EXPECT_EQ(split.stages[3].cost.output_bytes, whole / 8);
  EXPECT_EQ(split.stages[7].cost.output_bytes, 0);
  auto gathers = [](const std::vector<TpCollective>& cs) {
    int64_t n = 0;
    for (const TpCollective& c : cs)
      if (c.name == "p2p.gather") {
        EXPECT_EQ(c.op, CommOp::kAllGather);
        n += c.bytes;
      }
    return n;
  };
  EXPECT_EQ(gathers(split.stages[0].cost.tp_forward), 0);
  EXPECT_EQ(gathers(split.stages[3].cost.tp_forward), whole);
  EXPECT_EQ(gathers(split.stages[3].cost.tp_backward), whole);
  EXPECT_EQ(gathers(split.stages[7].cost.tp_backward), 0);
  EXPECT_EQ(gathers(plain.stages[3].cost.tp_forward), 0);
  // Stages 3 and 4 on one pp rank (a V placement's turn): nothing crosses between them.
  const GptModel v = build_gpt(gpt3(), p, 8, {}, {0, 1, 2, 3, 3, 2, 1, 0});
  EXPECT_EQ(gathers(v.stages[3].cost.tp_backward), 0);
  EXPECT_EQ(gathers(v.stages[4].cost.tp_forward), 0);
  EXPECT_EQ(gathers(v.stages[3].cost.tp_forward), whole);
  EXPECT_EQ(gathers(v.stages[4].cost.tp_backward), whole);
  // Under sequence parallelism the output is a shard already: nothing changes.
  LayerParallel sp = par(8, true, Recompute::kSelective, false);
  const GptModel sp_plain = build_gpt(gpt3(), sp, 8);
  sp.p2p_scatter_gather = true;
  const GptModel sp_split = build_gpt(gpt3(), sp, 8);
  EXPECT_EQ(sp_split.stages[3].cost.output_bytes, sp_plain.stages[3].cost.output_bytes);
  EXPECT_EQ(gathers(sp_split.stages[3].cost.tp_forward), 0);
}

}  // namespace
}  // namespace meshscope::model
