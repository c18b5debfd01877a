// Per-layer ops, collectives, parameters and activation memory of a transformer layer.
#include "sim/model/transformer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "traces/enum_names.h"

namespace meshscope::model {
namespace {

void require_divides(int64_t n, int64_t d, const char* what) {
  if (d <= 0 || n % d != 0)
    throw std::invalid_argument(std::string(what) + " (" + std::to_string(n) +
                                ") must be divisible by " + std::to_string(d));
}

OpCost gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int e, int64_t repeat) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  const double r = static_cast<double>(repeat);
  op.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * r;
  op.bytes =
      e * (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n) *
      r;
  return op;
}

TpCollective comm(const char* name, CommOp op, CommAxis axis, double bytes,
                  bool overlapped = false) {
  TpCollective c;
  c.name = name;
  c.bytes = static_cast<int64_t>(bytes);
  c.op = op;
  c.axis = axis;
  c.overlapped = overlapped;
  return c;
}

}  // namespace

double backward_bytes_factor(const OpCost& op, const ElementwisePasses& p) {
  const bool residual = op.name.find("residual") != std::string::npos;
  const bool rope = op.name == "attn.rope";
  const bool repeat = op.name == "attn.repeat_kv";  // its backward sums the copies: as many bytes
  const bool act = op.name.ends_with(".act");
  // The op's forward and gradient counts in the profile (none for the embedding and the like).
  std::pair<double, double> counts{0, -1};
  if (op.kind == OpKind::kNorm)
    counts = {p.norm, p.norm_grad};
  else if (residual)
    counts = {p.residual, p.residual_grad};
  else if (rope)
    counts = {p.rope, p.rope_grad};
  else if (op.name == "attn.softmax")
    counts = {p.softmax, p.softmax_grad};
  else if (act)
    counts = {p.activation, p.activation_grad};
  if (counts.second >= 0 && counts.first > 0) return counts.second / counts.first;
  return residual || rope || repeat ? 1.0 : 1.5;
}

std::optional<Recompute> parse_recompute(std::string_view s) {
  return traces::parse_enum<Recompute>(kRecomputeNames, s);
}

void add_linear(const GemmOps& out, const char* name, int64_t tokens, int64_t in, int64_t out_dim,
                int e, int64_t repeat) {
  const std::string n(name);
  out.forward->push_back(gemm(n, tokens, out_dim, in, e, repeat));
  out.input_grad->push_back(gemm(n + ".dgrad", tokens, in, out_dim, e, repeat));
  out.weight_grad->push_back(gemm(n + ".wgrad", in, out_dim, tokens, e, repeat));
}

OpCost elementwise(const char* name, OpKind kind, double elements, int e, double flops_per_element,
                   double passes) {
  OpCost op;
  op.name = name;
  op.kind = kind;
  op.flops = elements * flops_per_element;
  op.bytes = elements * e * passes;
  return op;
}

namespace {

// One transformer layer as transformer_layer builds it, part by part: the layer's shape on this
// rank, the ops of its three phases and its collectives as the parts append them, and what the
// parts tell each other (where fc2 starts, the MLP's activations in L). Holds pointers into
// itself (ops): not copied.
struct LayerBuilder {
  LayerBuilder(const TransformerShape& shape, const LayerParallel& parallel)
      : sh(shape), par(parallel) {}
  LayerBuilder(const LayerBuilder&) = delete;
  LayerBuilder& operator=(const LayerBuilder&) = delete;

  const TransformerShape& sh;
  const LayerParallel& par;
  const int64_t h = sh.hidden, a = sh.heads, kv = sh.kv_heads > 0 ? sh.kv_heads : sh.heads;
  const int64_t f = sh.ffn > 0 ? sh.ffn : 4 * h;
  const int64_t t = par.tp, b = par.micro_batch, s = par.seq;
  const int64_t d = head_dim();  // the shape checks first: members above it only
  const int e = par.element_bytes;
  const int64_t T = b * s / par.cp;                          // tokens on this rank
  const double rep = par.sequence_parallel ? 1.0 / t : 1.0;  // share of replicated regions
  const double Tr = static_cast<double>(T) * rep;
  const bool sp = par.sequence_parallel && t > 1;
  // Bytes an element of what the FP8 linears keep for the backward (their inputs).
  const int fe8 = par.fp8 ? 1 : e;
  const double tp_bytes = static_cast<double>(T) * h * e;  // full activation of the layer
  // Transformer Engine's userbuffers (sequence parallelism only): how entry `gemm` of
  // kTpOverlapGemms runs its collective beside the GEMM.
  const bool ub = par.tp_comm_overlap.has_value() && sp;
  const ElementwisePasses& pass = par.passes;
  const double q_heads = static_cast<double>(a) / t;
  // K and V repeated to the query heads' count before the attention kernel (see attention).
  const bool expand_kv = par.flash_attention && par.gqa_expand && kv < a;
  const int64_t kv_seen = expand_kv ? a : kv;  // K and V heads the attention kernel reads
  const int64_t up = sh.gated_mlp ? 2 : 1;
  const bool rerun_flash = par.recompute == Recompute::kSelective && par.flash_attention &&
                           par.selective_recomputes_flash;

  LayerCost L;
  std::vector<OpCost> fwd;  // forward ops, reused for full recomputation
  std::vector<OpCost> ig, wg;
  GemmOps ops{&fwd, &ig, &wg};
  std::vector<TpCollective> cf, cb;
  // Where the dense MLP's second GEMM starts in fwd and cf: the last op that saves a tensor for
  // the backward (see recompute_early_stop).
  size_t last_saving_op = 0, last_saving_comm = 0;

  // h / a, once every size the layer splits divides (throws naming the field otherwise).
  int64_t head_dim() const {
    require_divides(h, a, "hidden");
    require_divides(a, t, "heads");
    require_divides(kv, t, "kv_heads");
    require_divides(a, kv, "heads over kv_heads");
    require_divides(f, t, "ffn");
    require_divides(s, par.cp, "seq over cp");
    return h / a;
  }

  // Transformer Engine's FP8 linears (docs/ACCURACY.md item 50; TE 1.10-1.12,
  // transformer_engine/pytorch/module/): the GEMMs add_linear just added run on FP8 operands, and
  // the casts around them are streaming passes of bytes read + written per element. A
  // LayerNormLinear (qkv, fc1) gets its FP8 input from the norm kernel; in the backward it casts
  // and transposes the output gradient (fp8_cast_transpose_fused, 2 + 2) and transposes its
  // gathered FP8 input for the weight gradient (1 + 1). A Linear (proj, fc2) under sequence
  // parallelism casts its input (2 + 1), casts the output gradient on the rank's shard (2 + 1) and
  // transposes it gathered (1 + 1), and transposes its saved input for the weight gradient (1 + 1);
  // without, it casts and transposes its input (2 + 2) and the output gradient (2 + 2).
  void fp8_linear(const std::string& n, bool norm_linear, double in, double out) {
    if (!par.fp8) return;
    fwd.back().fp8 = ig.back().fp8 = wg.back().fp8 = true;
    auto cast = [&](std::vector<OpCost>& phase, const char* what, double bytes) {
      OpCost op;
      op.name = n + what;
      op.kind = OpKind::kElementwise;
      op.bytes = bytes;
      op.fp8 = true;  // a cast or transpose into FP8, not FP8 math
      phase.push_back(op);
    };
    if (norm_linear) {
      cast(ig, ".fp8_grad_cast_transpose", 4 * out);
      cast(wg, ".fp8_input_transpose", 2 * in);
    } else if (sp) {
      cast(fwd, ".fp8_input_cast", 3 * in);
      cast(ig, ".fp8_grad_cast", 3 * out / static_cast<double>(t));
      cast(ig, ".fp8_grad_transpose", 2 * out);
      cast(wg, ".fp8_input_transpose", 2 * in);
    } else {
      cast(fwd, ".fp8_input_cast_transpose", 4 * in);
      cast(ig, ".fp8_grad_cast_transpose", 4 * out);
    }
  }

  void tp_entry(const char* n) {  // before a column-parallel linear
    if (sp) {
      cf.push_back(comm(n, CommOp::kAllGather, CommAxis::kTp, tp_bytes));
      cb.push_back(comm(n, CommOp::kReduceScatter, CommAxis::kTp, tp_bytes));
    } else if (t > 1) {
      cb.push_back(comm(n, CommOp::kAllReduce, CommAxis::kTp, tp_bytes));
    }
  }
  // The collective beside `gemm`: under userbuffers (ub), as entry `ub_gemm` of kTpOverlapGemms
  // says.
  void put_beside(TpCollective& c, const OpCost& gemm, bool weight_grad,
                  const std::string& ub_gemm) const {
    c.beside = gemm;
    c.beside_weight_grad = weight_grad;
    if (!ub) return;  // NCCL's asynchronous collective beside the whole GEMM
    const auto at = std::find(kTpOverlapGemms.begin(), kTpOverlapGemms.end(), ub_gemm);
    const TpOverlapCfg& u =
        (*par.tp_comm_overlap)[static_cast<size_t>(at - kTpOverlapGemms.begin())];
    c.sms = std::max(1, u.num_sm);
    if (u.method == TpOverlapCfg::Method::kRingExchange) {
      c.gemm_share = static_cast<double>(t - 1) / t;  // the last chunk computes after the last hop
    } else if (u.method == TpOverlapCfg::Method::kPipeline) {
      const int n = std::max(1, u.num_splits);  // the last chunk's reduce-scatter runs after
      c.gemm_share = static_cast<double>(n - 1) / n;
      c.tail_share = 1.0 / n;
    }
  }
  // After a column-parallel linear whose entry collectives are cf[f] and cb[b]: under
  // tp_backward_overlap (or userbuffers) its input-gradient collective runs beside the linear's
  // weight-gradient GEMM, and under sequence parallelism the linear's split input is gathered
  // again beside its input-gradient GEMM, for the weight gradient (Megatron-LM LinearWithGrad-
  // AccumulationAndAsyncCommunication.backward: async all_gather before grad_output.matmul(weight),
  // async reduce_scatter or all_reduce of grad_input before the weight-gradient matmul; TE's bulk
  // overlaps *_dgrad and *_wgrad). Under userbuffers the forward's gather runs beside the GEMM too.
  void column_overlap(size_t f, size_t b, const char* n, const std::string& ub_gemm) {
    if (ub && f < cf.size()) put_beside(cf[f], fwd.back(), false, ub_gemm + "_fprop");
    if (!(par.tp_backward_overlap || ub) || b >= cb.size()) return;
    put_beside(cb[b], wg.back(), true, ub_gemm + "_wgrad");
    if (sp) {
      TpCollective again = comm(n, CommOp::kAllGather, CommAxis::kTp, tp_bytes);
      again.name += ".regather";
      put_beside(again, ig.back(), false, ub_gemm + "_dgrad");
      cb.push_back(again);
    }
  }
  // After a row-parallel linear and its exit collectives cf[f] and cb[b], under userbuffers: the
  // forward's reduce-scatter beside the GEMM, the backward's gather beside the input gradient's.
  void row_overlap(size_t f, size_t b, const std::string& ub_gemm) {
    if (!ub || f >= cf.size() || b >= cb.size()) return;
    put_beside(cf[f], fwd.back(), false, ub_gemm + "_fprop");
    put_beside(cb[b], ig.back(), false, ub_gemm + "_dgrad");
  }
  void tp_exit(const char* n) {  // after a row-parallel linear
    if (sp) {
      cf.push_back(comm(n, CommOp::kReduceScatter, CommAxis::kTp, tp_bytes));
      cb.push_back(comm(n, CommOp::kAllGather, CommAxis::kTp, tp_bytes));
    } else if (t > 1) {
      cf.push_back(comm(n, CommOp::kAllReduce, CommAxis::kTp, tp_bytes));
    }
  }

  // Attention block: ln1, the tp-split qkv, the attention kernel (or its score GEMMs), the
  // context-parallel K and V exchange, proj and the residual add.
  void attention() {
    fwd.push_back(elementwise("ln1", OpKind::kNorm, Tr * h, e, 5, pass.norm));
    const size_t attn_in_f = cf.size(), attn_in_b = cb.size();
    tp_entry("attn.tp_in");
    add_linear(ops, "attn.qkv", T, h, (a + 2 * kv) * d / t, e, 1);
    fp8_linear("attn.qkv", true, double(T) * h, double(T) * (a + 2 * kv) * d / t);
    column_overlap(attn_in_f, attn_in_b, "attn.tp_in", "qkv");
    if (sh.rotary && pass.rope > 0)
      fwd.push_back(elementwise("attn.rope", OpKind::kElementwise, double(T) * (a + kv) * d / t, e,
                                3, pass.rope));
    // A kernel without grouped K and V (PyTorch's SDPA before 2.5) gets them repeated to the query
    // heads' count first (expand_kv): expand + reshape copies them (read kv heads, write heads, for
    // K and V); the backward sums the copies back, moving as many bytes.
    if (expand_kv)
      fwd.push_back(elementwise("attn.repeat_kv", OpKind::kElementwise, 2.0 * T * a * d / t, e, 0,
                                static_cast<double>(a + kv) / a));
    if (par.flash_attention) {
      OpCost core;
      core.name = "attn.core";
      core.kind = OpKind::kAttention;
      // Causal: half of 4 T s h/t, at the width the kernel computes (its masked columns included).
      const double d_kernel = static_cast<double>(std::max(d, par.attention_head_dim));
      core.flops = 2.0 * T * s * q_heads * d_kernel;
      core.m = s / par.cp;  // query tokens of one sequence on this rank
      core.k = static_cast<int64_t>(d_kernel);
      core.dropout = par.attention_dropout;
      core.bytes = e * static_cast<double>(T) * (2 * a + 2 * kv_seen) * d / t;
      fwd.push_back(core);
      OpCost back = core;
      back.name = "attn.core.grad";
      back.flops = core.flops * kAttentionBackwardFlopRatio;
      back.backward = true;
      back.bytes = core.bytes * 2;
      ig.push_back(back);
    } else {
      const int64_t s_local = s / par.cp;
      GemmOps attn{&fwd, &ig, &ig};  // the score GEMMs have no weights: both grads go to I
      add_linear(attn, "attn.qk", s_local, d, s, e, b * a / t);
      fwd.push_back(elementwise("attn.softmax", OpKind::kElementwise,
                                double(b) * q_heads * s_local * s, e, 5, pass.softmax));
      add_linear(attn, "attn.av", s_local, s, d, e, b * a / t);
    }
    if (par.cp > 1) {
      // The whole sequence's K and V as the attention kernel takes them: where the stack repeats
      // them to the query heads' count before the kernel (torchtitan's repeat_kv), PyTorch's
      // context-parallel SDPA rotates the repeated heads (it had been sized at kv heads: a tenth
      // of a Llama 3 8B exchange's bytes under torchtitan; stop 70 audit).
      const double kv_bytes = 2.0 * T * par.cp * kv_seen * d * e / t;
      cf.push_back(comm("attn.cp_kv", CommOp::kAllGather, CommAxis::kCp, kv_bytes, true));
      cb.push_back(comm("attn.cp_kv", CommOp::kAllGather, CommAxis::kCp, kv_bytes, true));
      cb.push_back(comm("attn.cp_dkv", CommOp::kReduceScatter, CommAxis::kCp, kv_bytes, true));
    }
    add_linear(ops, "attn.proj", T, h / t, h, e, 1);
    fp8_linear("attn.proj", false, double(T) * h / t, double(T) * h);
    const size_t attn_out_f = cf.size(), attn_out_b = cb.size();
    tp_exit("attn.tp_out");
    row_overlap(attn_out_f, attn_out_b, "proj");
    fwd.push_back(
        elementwise("attn.dropout_residual", OpKind::kElementwise, Tr * h, e, 2, pass.residual));
  }

  // MLP block: ln2, the dense MLP or the experts, and the residual add.
  void mlp() {
    fwd.push_back(elementwise("ln2", OpKind::kNorm, Tr * h, e, 5, pass.norm));
    if (sh.experts > 0)
      moe();
    else
      dense_mlp();
    fwd.push_back(
        elementwise("mlp.dropout_residual", OpKind::kElementwise, Tr * h, e, 2, pass.residual));
  }

  void moe() {
    // Megatron-core's all-to-all token dispatcher (MoEAlltoAllTokenDispatcher): the router and the
    // permutation run on this tensor-parallel rank's own tokens (T / t of them under sequence
    // parallelism, which tp > 1 needs: predict/config.cpp), the all-to-all over ep sends them to
    // their experts, and an all-gather over tp gives each rank every token routed to its experts,
    // whose weights tp splits (fc1's columns, fc2's rows); the way back reduce-scatters over tp
    // and returns the tokens by the all-to-all. No gather of the layer's input before the router
    // and no reduce-scatter after the MLP: the dispatcher's own collectives stand for them.
    require_divides(sh.experts, par.ep, "experts over ep");
    const int64_t fe = sh.expert_ffn > 0 ? sh.expert_ffn : f;
    require_divides(fe, t, "expert_ffn");
    const int64_t local_experts = sh.experts / par.ep;
    const int64_t own = sp ? (T + t - 1) / t : T;  // tokens this rank routes
    const int64_t routed = T * sh.top_k;           // routed tokens of the tp group
    const int64_t per_expert = std::max<int64_t>(1, routed * par.ep / sh.experts);
    add_linear(ops, "moe.router", own, h, sh.experts, e, 1);
    const double a2a = static_cast<double>(own) * sh.top_k * h * e;
    const double gathered = static_cast<double>(routed) * h * e;
    if (par.ep > 1) {
      cf.push_back(comm("moe.dispatch", CommOp::kAllToAll, CommAxis::kEp, a2a));
      cb.push_back(comm("moe.combine.grad", CommOp::kAllToAll, CommAxis::kEp, a2a));
    }
    if (sp) {
      cf.push_back(comm("moe.tp_gather", CommOp::kAllGather, CommAxis::kTp, gathered));
      cb.push_back(comm("moe.tp_gather", CommOp::kReduceScatter, CommAxis::kTp, gathered));
    }
    add_linear(ops, "moe.fc1", per_expert, h, up * fe / t, e, local_experts);
    fwd.push_back(elementwise("moe.act", OpKind::kElementwise, double(routed) * up * fe / t, e, 8,
                              pass.activation));
    add_linear(ops, "moe.fc2", per_expert, fe / t, h, e, local_experts);
    if (sp) {
      cf.push_back(comm("moe.tp_scatter", CommOp::kReduceScatter, CommAxis::kTp, gathered));
      cb.push_back(comm("moe.tp_scatter", CommOp::kAllGather, CommAxis::kTp, gathered));
    }
    if (par.ep > 1) {
      cf.push_back(comm("moe.combine", CommOp::kAllToAll, CommAxis::kEp, a2a));
      cb.push_back(comm("moe.dispatch.grad", CommOp::kAllToAll, CommAxis::kEp, a2a));
    }
    L.expert_parameters = local_experts * (1 + up) * h * fe / t;
    L.dense_parameters += h * sh.experts;
    // fc1's input, its output for the activation's backward and fc2's input (every routed token
    // of the tp group, gathered), and the experts' returned outputs, which the combine weights by
    // the router's probabilities and keeps for the probabilities' gradient.
    L.activation_bytes += static_cast<int64_t>(double(routed) * e * (h + 2.0 * up * fe / t) +
                                               double(own) * sh.top_k * h * e);
    L.weight_grad_bytes += static_cast<int64_t>(double(routed) * e * (h + double(fe) / t));
    L.model_flops += 2.0 * b * s * h * fe * (1 + up) * sh.top_k + 2.0 * b * s * h * sh.experts;
  }

  void dense_mlp() {
    const size_t mlp_in_f = cf.size(), mlp_in_b = cb.size();
    tp_entry("mlp.tp_in");
    add_linear(ops, "mlp.fc1", T, h, up * f / t, e, 1);
    fp8_linear("mlp.fc1", true, double(T) * h, double(T) * up * f / t);
    column_overlap(mlp_in_f, mlp_in_b, "mlp.tp_in", "fc1");
    fwd.push_back(elementwise("mlp.act", OpKind::kElementwise, double(T) * up * f / t, e, 8,
                              pass.activation));
    last_saving_op = fwd.size();
    last_saving_comm = cf.size();
    add_linear(ops, "mlp.fc2", T, f / t, h, e, 1);
    fp8_linear("mlp.fc2", false, double(T) * f / t, double(T) * h);
    L.dense_parameters += (1 + up) * h * f / t + f / t + h;
    L.linear_weights += (1 + up) * h * f / t;
    // fc1's output for the activation's backward, and fc2's input (in FP8 under TE's FP8: the
    // activation's bf16 output is not kept).
    L.activation_bytes += static_cast<int64_t>(double(T) * (e * up + fe8) * f / t);
    L.weight_grad_bytes += static_cast<int64_t>(double(T) * fe8 * f / t);
    L.model_flops += 2.0 * b * s * h * f * (1 + up);
    const size_t mlp_out_f = cf.size(), mlp_out_b = cb.size();
    tp_exit("mlp.tp_out");
    row_overlap(mlp_out_f, mlp_out_b, "fc2");
  }

  void backward_elementwise() {
    // Backward of the elementwise ops (the softmax's too): the profile's count where it states
    // one, else from first principles: a pointwise or normalising op's gradient reads the saved
    // tensor and the incoming gradient and writes its own, 3 accesses where the forward made 2; a
    // residual add passes its gradient through and adds the branch's (as many bytes as its
    // forward); a rotary embedding rotates the gradient back (same).
    for (const OpCost& op : fwd)
      if (op.kind == OpKind::kNorm || op.kind == OpKind::kElementwise) {
        OpCost g = op;
        g.name += ".grad";
        g.bytes *= backward_bytes_factor(op, pass);
        ig.push_back(g);
      }
    // q, k and v were views of one projection output: split's backward joins their gradients.
    if (par.qkv_split_grad)
      ig.push_back(elementwise("attn.qkv_split.grad", OpKind::kElementwise,
                               double(T) * (a + 2 * kv) * d / t, e, 0, 2));
  }

  void recomputation() {
    if (rerun_flash)
      for (const OpCost& op : fwd)
        if (op.kind == OpKind::kAttention) {
          OpCost r = op;
          r.name = "recompute." + r.name;
          ig.push_back(r);
        }
    if (par.recompute == Recompute::kSelective && !par.flash_attention) {
      for (const OpCost& op : fwd)
        if (op.name.rfind("attn.qk", 0) == 0 || op.name.rfind("attn.av", 0) == 0 ||
            op.name == "attn.softmax") {
          OpCost r = op;
          r.name = "recompute." + r.name;
          ig.push_back(r);
        }
    }
    // Under early stop a recomputation ends where fc2 saves its input and weight: autograd saves
    // an op's inputs before it runs the op (tools/autograd/gen_variable_type.py,
    // setup_derivative before emit_call), and torch.utils.checkpoint stops at the last saved
    // tensor (_StopRecomputationError). fc2, the collective after it and the residual add are not
    // run again. A MoE layer's combine saves the experts' outputs, so there everything runs again.
    const bool stop = par.recompute_early_stop && sh.experts == 0;
    const size_t ops_again = stop ? last_saving_op : fwd.size();
    const size_t comms_again = stop ? last_saving_comm : cf.size();
    if (par.recompute == Recompute::kOpSelective) {
      // torchtitan's op-level policy counts the layer's matmuls in call order (wq, wk, wv, wo, w1,
      // w3, w2) and saves every other one's output: wk, wo and w3 run again before the backward,
      // as do the norms, rotary, activation and residual adds (their outputs are not saved). The
      // model folds q, k, v into one GEMM and w1, w3 into fc1: the recomputed parts are priced as
      // GEMMs of their own shapes.
      ig.push_back(gemm("recompute.attn.k", T, kv * d / t, h, e, 1));
      ig.push_back(gemm("recompute.attn.proj", T, h, h / t, e, 1));
      if (sh.gated_mlp && sh.experts == 0)
        ig.push_back(gemm("recompute.mlp.w3", T, f / t, h, e, 1));
      for (size_t i = 0; i < ops_again; ++i)
        if (fwd[i].kind == OpKind::kNorm || fwd[i].kind == OpKind::kElementwise) {
          OpCost r = fwd[i];
          r.name = "recompute." + r.name;
          ig.push_back(r);
        }
    }
    if (par.recompute == Recompute::kFull) {
      std::vector<OpCost> again;
      for (size_t i = 0; i < ops_again; ++i) {
        OpCost r = fwd[i];
        r.name = "recompute." + r.name;
        again.push_back(r);
      }
      ig.insert(ig.begin(), again.begin(), again.end());
      cb.insert(cb.begin(), cf.begin(), cf.begin() + static_cast<std::ptrdiff_t>(comms_again));
    }
  }

  // Parameters: attention and the two norms.
  void attention_parameters() {
    L.dense_parameters += h * (a + 2 * kv) * d / t + (a + 2 * kv) * d / t + h * h / t + h + 4 * h;
    L.linear_weights += h * (a + 2 * kv) * d / t + h * h / t;
    L.model_flops += 2.0 * b * s * h * (a + 2 * kv) * d + 4.0 * b * s * s * h + 2.0 * b * s * h * h;
  }

  // Activations kept for the backward (Korthikanti et al. eq. 1-6 generalised).
  void activation_memory() {
    const double Td = static_cast<double>(T);
    double act = 0;
    if (par.recompute == Recompute::kFull) {
      act = Tr * h * e;  // the layer input only
    } else if (par.recompute == Recompute::kOpSelective) {
      // The checkpointed layer input, the saved matmul outputs (wq, wv, w1, w2) and the attention
      // output with its softmax statistics; everything else is rebuilt from them. A layer with
      // experts keeps its attention block so, and its experts' activations whole (counted in
      // moe): the policy's every-other count is of plain matmuls, and what it does with the
      // experts' grouped GEMMs is not modelled (an assumption; it had kept the whole layer,
      // charging the recomputation's time for no memory saved).
      const double mlp_kept =
          sh.experts == 0 ? Td * e * (double(f) / t + h) : static_cast<double>(L.activation_bytes);
      act = Td * e * (h + double(a) * d / t + double(kv) * d / t) + mlp_kept + Td * e * a * d / t +
            Td * q_heads * 4;
    } else {
      // The qkv and fc1 inputs: split under sequence parallelism unless the stack keeps them
      // gathered.
      const double linear_in = par.tp_saves_gathered_input ? Td : Tr;
      act += 2 * Tr * h * e;                      // norm inputs
      act += linear_in * h * fe8;                 // qkv input (FP8 under TE's FP8)
      act += Td * (a + 2 * kv_seen) * d * e / t;  // q, k, v (k and v as the kernel saw them)
      act += Td * h * e / t;                      // proj input (the attention output)
      if (par.fp8) act += Td * h / t;             // proj's FP8 copy of it
      act += linear_in * h * fe8;                 // fc1 input
      if (par.hidden_dropout) act += 2 * Tr * h;  // the attention's and the MLP's dropout masks
      if (par.flash_attention) {
        if (!rerun_flash) act += Td * q_heads * 4;  // softmax statistics
      } else if (par.recompute == Recompute::kNone) {
        act += (2.0 * e + 1) * b * q_heads * (s / par.cp) * s;  // scores, mask, dropout output
      }
      act += static_cast<double>(L.activation_bytes);  // MLP inner activations (moe, dense_mlp)
    }
    // W needs the inputs of the qkv, proj and fc1 GEMMs (fc2's is counted in dense_mlp); under
    // full recomputation they are rebuilt by I and live until W.
    L.weight_grad_bytes += static_cast<int64_t>(Td * fe8 * (2.0 * h * rep + double(h) / t));
    L.activation_bytes = static_cast<int64_t>(act);
  }

  // The layer's cost, its ops and collectives moved out of the builder.
  LayerCost finish() {
    // Under sequence parallelism TE's FP8 linears gather FP8: every tp all-gather of the layer
    // (qkv's and fc1's input, again in the backward; proj's and fc2's output gradient) moves 1
    // byte an element. Their reduce-scatters carry the bf16 GEMM outputs.
    if (par.fp8 && sp)
      for (std::vector<TpCollective>* v : {&cf, &cb})
        for (TpCollective& c : *v)
          if (c.axis == CommAxis::kTp && c.op == CommOp::kAllGather) c.bytes /= e;
    L.forward = std::move(fwd);
    L.input_grad = std::move(ig);
    L.weight_grad = std::move(wg);
    L.comm_forward = std::move(cf);
    L.comm_backward = std::move(cb);
    return std::move(L);
  }
};

}  // namespace

LayerCost transformer_layer(const TransformerShape& sh, const LayerParallel& par) {
  LayerBuilder layer(sh, par);
  layer.attention();
  layer.mlp();
  layer.backward_elementwise();
  layer.recomputation();
  layer.attention_parameters();
  layer.activation_memory();
  return layer.finish();
}

}  // namespace meshscope::model
