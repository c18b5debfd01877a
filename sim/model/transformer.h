// One transformer layer (attention + MLP, optionally mixture-of-experts) on one tensor-parallel
// rank for one microbatch: its ops per phase, its in-layer collectives, parameters and the
// activation memory it keeps (Korthikanti et al. 2022, "Reducing Activation Recomputation in
// Large Transformer Models", section 4, generalised to grouped-query attention and any ffn size).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/model/stage_cost.h"

namespace meshscope::model {

// kSelective: Korthikanti et al.'s attention-core recomputation; kOpSelective: torchtitan's per-op
// selective checkpointing, which saves every other matmul's output (wq, wv, w1, w2) and the
// attention kernel's, and recomputes the other matmuls (wk, wo, w3) and every elementwise op.
enum class Recompute : uint8_t { kNone = 0, kSelective = 1, kFull = 2, kOpSelective = 3, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Recompute::kCount)>
    kRecomputeNames = {"none", "selective", "full", "op-selective"};
constexpr std::string_view name(Recompute r) { return kRecomputeNames[static_cast<size_t>(r)]; }
std::optional<Recompute> parse_recompute(std::string_view s);

// Reads + writes of device memory per element of each elementwise op's tensor in one forward
// pass (a fused op reads its input once and writes its output once: 2), and of its gradient (see
// backward_bytes_factor). A training framework's fusions set them (sim/cost/frameworks/*.json).
struct ElementwisePasses {
  double norm = 2;        // layer norm / RMS norm over the hidden state
  double activation = 2;  // GeLU or SwiGLU over the MLP's inner activation
  double residual = 3;    // (bias +) (dropout +) residual add: two reads, one write
  double rope = 0;        // rotary embedding over q and k (models with rotary positions only)
  double softmax = 2;     // attention softmax over the scores, when not flash attention
  // The same ops' gradients, in the same units (profile key elementwise_backward_passes); a
  // negative value follows backward_bytes_factor's rule. A stack states its own count where its
  // backward differs from the rule: autograd running an eager op's pieces one by one, a norm's
  // weight gradient in a kernel of its own.
  double norm_grad = -1;
  double activation_grad = -1;
  double residual_grad = -1;
  double rope_grad = -1;
  double softmax_grad = -1;
};

// How Transformer Engine's userbuffers run one GEMM of a layer with its tensor-parallel
// collective (Megatron-core --tp-comm-overlap; TE's ub_cfgs, one entry per GEMM, kTpOverlapGemms).
struct TpOverlapCfg {
  enum class Method : uint8_t { kRingExchange = 0, kPipeline, kBulk, kCount };
  Method method = Method::kRingExchange;
  int num_sm = 1;      // SMs its communication holds while the GEMM runs
  int num_splits = 1;  // kPipeline: the chunks the GEMM and its reduce-scatter are cut into
};
inline constexpr std::array<std::string_view, static_cast<size_t>(TpOverlapCfg::Method::kCount)>
    kTpOverlapMethodNames = {"ring_exchange", "pipeline", "bulk"};
// The GEMMs TE overlaps, by TE's names: the forward's gathers before qkv and fc1 and its
// reduce-scatters after proj and fc2 (*_fprop); the backward's gathers before the input-gradient
// GEMMs of proj and fc2 (*_dgrad); qkv's and fc1's split input gathered again beside their
// input-gradient GEMM (*_dgrad) and their input gradient reduce-scattered beside the
// weight-gradient GEMM (*_wgrad).
inline constexpr std::array<std::string_view, 10> kTpOverlapGemms = {
    "qkv_fprop", "fc1_fprop", "proj_fprop", "fc2_fprop", "proj_dgrad",
    "fc2_dgrad", "qkv_dgrad", "qkv_wgrad",  "fc1_dgrad", "fc1_wgrad"};
using TpOverlapCfgs = std::array<TpOverlapCfg, kTpOverlapGemms.size()>;

struct TransformerShape {
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // grouped-query attention; = heads for multi-head attention
  int64_t ffn = 0;         // MLP inner size
  bool gated_mlp = false;  // SwiGLU: gate and up projections (three h x ffn matrices)
  int64_t experts = 0;     // 0: dense MLP; else mixture of experts, top_k of them per token
  int64_t top_k = 1;
  int64_t expert_ffn = 0;
  bool rotary = false;  // rotary position embedding applied to q and k in every layer
};

struct LayerParallel {
  int64_t micro_batch = 1;  // sequences per microbatch
  int64_t seq = 2048;       // full sequence length
  int tp = 1;
  int cp = 1;  // context parallel: each rank holds seq / cp tokens
  int ep = 1;  // expert parallel: experts / ep experts per rank
  bool sequence_parallel = false;
  bool flash_attention = true;  // no seq^2 scores kept; attention recomputed inside its backward
  // The head dimension the flash-attention kernel computes at, when wider than the model's: the
  // kernel's tiles are as wide as the head dimension it was compiled for (cost::kernel_head_dim).
  // 0: the model's own.
  int64_t attention_head_dim = 0;
  Recompute recompute = Recompute::kNone;
  // With kFull: only every n-th layer (the n-th, 2n-th, ... of a pipeline rank's layers, in
  // stage order) is checkpointed and recomputed, the others keep their activations (torchtitan's
  // selective layer checkpointing, selective_ac_option n, counted per process). build_gpt reads
  // it; transformer_layer prices one layer as `recompute`.
  int recompute_every = 1;
  // With kFull or kOpSelective: the recomputation stops as soon as the last tensor the backward
  // needs is rebuilt (PyTorch's non-reentrant checkpoint from 2.1 on, early stop on by default).
  // A dense layer's last GEMM saves its input and weight before it runs, so that GEMM, the tp
  // collective after it and the residual add are not run again. Without it (reentrant
  // checkpoints, Megatron's own, PyTorch before 2.1) the whole forward runs again.
  bool recompute_early_stop = false;
  int element_bytes = 2;
  ElementwisePasses passes;
  // Bytes the loss moves per logit (vocabulary entry of each token), in the forward and in the
  // backward: the framework's cross-entropy kernels (cost::Framework::loss_forward_bytes). 8 and 8:
  // one fp32 read and write each way. build_gpt reads them.
  double loss_forward_bytes = 8;
  double loss_backward_bytes = 8;
  // Bytes per logit the loss keeps for its backward (cost::Framework::loss_saved_bytes), counted
  // in the last stage's activations. 4: an fp32 copy.
  double loss_saved_bytes = 4;
  // Bytes per logit the loss holds at once at its peak, the saved ones included
  // (cost::Framework::loss_peak); what exceeds loss_saved_bytes is the last stage's working memory.
  double loss_peak_bytes = 8;
  // Pipeline stages exchange their activations and gradients split over the tp ranks, each rank
  // sending 1/tp of the tensor, which the receiving stage all-gathers over tp (Megatron-LM's
  // scatter/gather of pipeline tensors; DeepSpeed's partitioned pipe activations). Without it
  // every tp rank sends the whole tensor. No effect under sequence parallelism, whose stage
  // outputs are already split. build_gpt reads it.
  bool p2p_scatter_gather = false;
  // Megatron-LM's column-parallel backward (LinearWithGradAccumulationAndAsyncCommunication): the
  // input-gradient collective of the attention's and the dense MLP's first linear runs beside
  // that linear's weight-gradient GEMM, and under sequence parallelism the linear's input, kept
  // split, is gathered again beside its input-gradient GEMM (TpCollective::beside). False: they
  // run alone and the input is not gathered again. transformer_layer reads it.
  bool tp_backward_overlap = false;
  // The q, k and v gradients are joined into the fused qkv projection's output gradient by a copy
  // (split's backward: read and write (heads + 2 kv heads) x head_dim per token), an op of the
  // input gradient's. transformer_layer reads it.
  bool qkv_split_grad = false;
  // With kSelective under flash attention: the stack recomputes the attention kernel's forward
  // before its backward (megatron-core's checkpoint_core_attention), keeping the kernel's inputs
  // and not its softmax statistics. False: selective recomputation covers only an unfused
  // attention's scores, and a flash kernel is left as it is (Megatron-LM's ParallelAttention).
  bool selective_recomputes_flash = false;
  // Dropout after the attention's and the MLP's output (1-byte masks kept for the backward,
  // Korthikanti et al.'s sbh each). False: the stack has none, or p = 0 (ATen's dropout returns
  // its input then), and keeps no mask.
  bool hidden_dropout = true;
  // The fused attention kernel applies dropout to the attention probabilities, and the time it
  // takes is charged (cost::attention_dropout_share: each fused class's measured share;
  // docs/ACCURACY.md items 36 and 37). No memory: the kernel draws the mask again in its
  // backward.
  bool attention_dropout = false;
  // Under sequence parallelism the qkv and fc1 inputs are kept gathered (T x h), as a stack whose
  // linears see the all-gathered input saves it for their weight gradient (PyTorch DTensor's
  // SequenceParallel + PrepareModuleInput); false: kept split (T/tp x h) and gathered again in the
  // backward (Megatron-LM).
  bool tp_saves_gathered_input = false;
  // With grouped-query attention, the stack repeats K and V to the query heads' count before its
  // attention kernel (torchtitan's repeat_kv, fms's expand + flatten, for PyTorch's SDPA before
  // 2.5): a copy each way, and the kernel reads and saves the repeated K and V.
  bool gqa_expand = false;
  // Transformer Engine's FP8 linears (options.fp8; docs/ACCURACY.md item 50): the dense layer's
  // qkv, proj, fc1 and fc2 run their three GEMMs on FP8 operands (OpCost::fp8), with TE's casts
  // and transposes around them as streaming passes (TE 1.10-1.12 linear.py and
  // layernorm_linear.py), their tp all-gathers move FP8 (1 byte an element), and they keep their
  // inputs for the backward in FP8. Attention, the output layer and elementwise ops are unchanged.
  bool fp8 = false;
  // Transformer Engine's userbuffers overlap every tp collective of a dense layer with a GEMM
  // (with sequence parallelism only, as Megatron-LM requires): each as its entry in
  // kTpOverlapGemms order says. Empty: off.
  std::optional<TpOverlapCfgs> tp_comm_overlap;
};

struct LayerCost {
  std::vector<OpCost> forward, input_grad, weight_grad;
  std::vector<TpCollective> comm_forward, comm_backward;
  int64_t dense_parameters = 0;  // per tp rank
  // Of those, the weights of the four linears that run in FP8 under LayerParallel::fp8 (the
  // weights whose FP8 copy and transpose TE caches).
  int64_t linear_weights = 0;
  int64_t expert_parameters = 0;  // per tp rank, after the ep split
  int64_t activation_bytes = 0;   // kept from forward to backward
  int64_t weight_grad_bytes = 0;  // of those, what the W pass needs after I
  double model_flops = 0;         // forward FLOPs of the whole layer (all tp ranks), Megatron's
                                  // count: full seq x seq attention, no recomputation
};

// Throws std::invalid_argument naming the field when shapes do not divide.
LayerCost transformer_layer(const TransformerShape& shape, const LayerParallel& par);

// Append ops that make a GEMM's forward, input-gradient and weight-gradient passes.
struct GemmOps {
  std::vector<OpCost>* forward;
  std::vector<OpCost>* input_grad;
  std::vector<OpCost>* weight_grad;
};
void add_linear(const GemmOps& out, const char* name, int64_t tokens, int64_t in, int64_t out_dim,
                int element_bytes, int64_t repeat = 1);
// Bytes of an elementwise op's gradient over its forward's: the profile's gradient count over its
// forward count where it states one (`passes`' *_grad), else the rule: 1.5 for pointwise and
// normalising ops (read the saved tensor and the incoming gradient, write one: 3 accesses for the
// forward's 2), 1 for residual adds, rotary embeddings and K/V repeats.
double backward_bytes_factor(const OpCost& op, const ElementwisePasses& passes);
// `passes`: reads + writes of each element (2: read once, write once).
OpCost elementwise(const char* name, OpKind kind, double elements, int element_bytes,
                   double flops_per_element = 1, double passes = 2);

}  // namespace meshscope::model
