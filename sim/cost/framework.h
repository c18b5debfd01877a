// A training framework's profile (sim/cost/frameworks/*.json): what it costs beyond the math —
// which attention kernel it runs, how many memory passes its elementwise ops make, whether its
// data-parallel collectives hide behind compute — read from data files beside the hardware catalog.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/cost/attention_kernel.h"
#include "sim/cost/hardware.h"
#include "sim/model/transformer.h"

namespace meshscope::cost {

// How a data-parallel collective relates to the compute around it.
enum class Overlap : uint8_t { kExposed = 0, kOverlapped, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Overlap::kCount)> kOverlapNames =
    {"exposed", "overlapped"};

// How published step times compare with meshscope's predictions (docs/ACCURACY.md, "Ranges"): an
// 80% prediction interval of published / predicted - 1 for a new run, from the `rows` runs of the
// development set on this framework and hardware (their mean, with the within-group spread pooled
// over every group).
struct Residuals {
  double low = 0;
  double high = 0;
  int rows = 0;
  // The longest sequence of those runs (profile key "max_seq"; 0: not stated). A config with a
  // longer one is predicted beyond what the range was measured on.
  int64_t max_seq = 0;
};

// A profile figure that may differ by the run's precision: one number for every precision
// (`all`), or an object {"bf16", "fp16", "fp32"} whose entries override it. 0: not given.
struct ByPrecision {
  double all = 0;
  double bf16 = 0;
  double fp16 = 0;
  double fp32 = 0;
  // The figure for a run at `p` (tf32 takes fp32's): its precision's entry, else the number.
  double at(Precision p) const {
    const double by = p == Precision::kBf16 ? bf16 : p == Precision::kFp16 ? fp16 : fp32;
    return by > 0 ? by : all;
  }
  // Sets the figure for runs at `p` (tf32 sets fp32's).
  void set(Precision p, double v) {
    (p == Precision::kBf16 ? bf16 : p == Precision::kFp16 ? fp16 : fp32) = v;
  }
};

struct Framework {
  std::string name;  // "megatron-2022"
  std::string description;
  std::vector<std::string> sources;
  AttentionKernel flash = AttentionKernel::kFlash2;          // when options.flash_attention
  AttentionKernel softmax = AttentionKernel::kFusedSoftmax;  // when not
  model::ElementwisePasses passes;
  // Data-parallel gradient reduction: bucketed and issued during the last microbatch's backward
  // (overlapped), or after it (exposed).
  Overlap grad_reduce = Overlap::kExposed;
  // Bytes per gradient element in the data-parallel gradient reductions (0: the config's element
  // size). PyTorch FSDP's MixedPrecision reduce_dtype float32 reduces in 4 bytes. The profile key
  // "grad_reduce_bytes" is a number, or an object by the run's precision ({"bf16": 4}: Megatron-LM
  // reduces its fp32 main gradients under bf16), whose precisions not given reduce at their own
  // element size.
  ByPrecision grad_reduce_bytes;
  // Bytes per parameter of the gradients a GPU keeps through a step (profile key
  // "gradient_bytes": a number, or an object by the run's precision), where the stack keeps more
  // than one gradient of the run's element size: Megatron-LM's fp32 main_grad under bf16 (4),
  // DeepSpeed's bf16 gradients beside BF16_Optimizer's fp32 copy (6). 0: the element size.
  ByPrecision gradient_bytes;
  // The gradients are kept in the type they are reduced in (profile key "gradient_bytes":
  // "reduced"): megatron-core's and apex's gradient buffers, which each parameter's main_grad
  // views and the data-parallel collective reduces (docs/ACCURACY.md item 45).
  bool gradients_in_reduce_dtype = false;
  // ZeRO's parameter all-gathers (ZeRO-3 per microbatch, ZeRO-1/2 after the step): prefetched
  // behind the compute that precedes their use (overlapped), or waited for (exposed).
  Overlap param_gather = Overlap::kExposed;
  // Memory passes a sharded data-parallel framework (ZeRO-3 / FSDP) makes over a stage's unsharded
  // parameters outside the math, in bytes moved per parameter: per parameter all-gather (copying
  // the gathered buffer out into the parameters) and per gradient reduce-scatter (flattening the
  // gradients into the reduce buffer, casting them to the reduce dtype, pre-dividing them). Each
  // is a streaming pass priced at the memory rate on the compute stream (profile key
  // "sharded_copies": {"gather": bytes, "reduce": bytes}; 0: none).
  double gather_copy_bytes = 0;
  double reduce_copy_bytes = 0;
  // Memory passes a framework that keeps fp32 weights under autocast (PyTorch AMP) makes over a
  // stage's parameters every microbatch, at any ZeRO stage, in bytes per parameter: the forward
  // casts each weight to the compute dtype once (read 4, write 2), the backward casts its gradient
  // back to fp32 and accumulates it into the fp32 gradient. Streaming passes on the compute stream
  // (profile key "weight_casts": {"forward": bytes, "backward": bytes}; 0: none, as in frameworks
  // that keep bf16 weights or cast their shards before the gather).
  double cast_forward_bytes = 0;
  double cast_backward_bytes = 0;
  // A pass of its own that adds each microbatch's weight gradients into the gradients kept across
  // the microbatches of a step, over every parameter of a stage, in bytes per parameter, by the
  // run's precision (profile key "grad_accumulation": {"bf16": bytes, "fp16": bytes, "fp32":
  // bytes}; tf32 runs take fp32's; 0: none, as where the weight-gradient GEMM accumulates into
  // them itself, Megatron's gradient_accumulation_fusion, or a sharded stack reduces each
  // microbatch's). E.g. DeepSpeed's bf16 optimizer, hp_grad.add_(lp.grad.to(fp32)): 2 + 4 to
  // cast, 4 + 4 + 4 to add. A streaming pass on the compute stream with the weight gradients.
  // Only by precision: a precision not given pays nothing.
  ByPrecision grad_accumulation;
  // Bytes the loss moves per logit in the forward and in the backward (profile key "loss_bytes":
  // {"forward": bytes, "backward": bytes}): its cross-entropy kernels' reads and writes of the
  // logits and their gradient, casts included. Default 8 and 8, one fp32 read and write each way
  // (an assumption; a fused kernel over bf16 logits moves less, an eager fp32 loss more).
  double loss_forward_bytes = 8;
  double loss_backward_bytes = 8;
  // Bytes per logit the loss keeps from its forward to its backward (profile key
  // "loss_saved_bytes"): what its kernels save, an fp32 softmax or log-softmax (4) or the bf16
  // logits a fused kernel recomputes from (2). Default 4, an fp32 copy (an assumption).
  double loss_saved_bytes = 4;
  // Bytes per logit the loss holds at once at its peak, what it saves included (profile key
  // "loss_peak_bytes"): the saved copy beside the gradients its backward hands from kernel to
  // kernel, or the logits and their copies in its forward, whichever is more. The part above
  // loss_saved_bytes is working memory held only while the loss runs. Default: the saved bytes and
  // one fp32 gradient of the logits, loss_saved_bytes + 4 (an assumption, as the default
  // loss_bytes).
  double loss_peak_bytes = -1;  // < 0: the default
  double loss_peak() const { return loss_peak_bytes < 0 ? loss_saved_bytes + 4 : loss_peak_bytes; }
  // How many times its backward's fraction of peak the attention kernel's forward reaches
  // (profile key "attention_forward_speedup"; 1: one rate for both; cost::attention_rates).
  double attention_forward_speedup = 1;
  // Bytes moved per parameter of a GPU's optimizer shard by one Adam step and the gradient clipping
  // before it (profile key "optimizer_step_bytes"; 0: one fused Adam pass, 28 bytes: read the
  // fp32 weight, moments and gradient, write the weight, moments and the bf16 copy). An unfused
  // per-tensor or foreach Adam makes a pass per arithmetic op.
  // The key may also be an object by the run's precision ({"bf16": 42, "fp16": 54}: Megatron-LM's
  // fp16 step copies and unscales its fp16 main gradients), whose precisions not given take the
  // number.
  ByPrecision optimizer_step_bytes;
  // Pipeline stages exchange activations and gradients split over the tp ranks and all-gather
  // them on receipt (profile key "p2p_scatter_gather"; model::LayerParallel::p2p_scatter_gather).
  bool p2p_scatter_gather = false;
  // A stage's pipeline sends complete before its next compute starts (profile key "p2p_blocking";
  // engine::EngineInput::blocking_sends); false: they overlap the compute that follows.
  bool p2p_blocking = false;
  // A stage posts the receive of its next chunk of each direction as soon as it has computed the
  // current one (Megatron-core's interleaved schedule with overlap_p2p_comm), so NCCL's receive
  // kernel holds its thread blocks beside the compute until the data arrives (profile key
  // "p2p_recv_posted_ahead"; engine::EngineInput::recvs_posted_ahead, docs/ACCURACY.md item 33).
  bool p2p_recv_posted_ahead = false;
  // A column-parallel linear's backward runs its input-gradient collective (reduce-scatter under
  // sequence parallelism, all-reduce without) beside its weight-gradient GEMM, and under sequence
  // parallelism gathers its split input again beside its input-gradient GEMM (profile key
  // "tp_backward_overlap"; model::LayerParallel::tp_backward_overlap). False: each tp collective
  // runs alone on the compute stream.
  bool tp_backward_overlap = false;
  // The attention takes q, k and v as views of the fused projection's output (torch.split or
  // chunk), so autograd joins their gradients into one with a copy (split's backward, at::cat)
  // before the projection's backward (profile key "qkv_split_grad";
  // model::LayerParallel::qkv_split_grad). False: the kernel writes them into one buffer, or the
  // projections are separate.
  bool qkv_split_grad = false;
  // Selective recomputation reruns the attention kernel's forward under flash attention too
  // (megatron-core: checkpoint_core_attention wraps the core attention whatever kernel runs it;
  // profile key "selective_recomputes_flash"; model::LayerParallel::selective_recomputes_flash).
  // False: it covers only an unfused attention's scores (Megatron-LM's ParallelAttention).
  bool selective_recomputes_flash = false;
  // Dropout after the attention and the MLP keeps a 1-byte mask per element for the backward
  // (profile key "hidden_dropout"; model::LayerParallel::hidden_dropout). False: no dropout, or
  // p = 0, and no mask.
  bool hidden_dropout = true;
  // The stack applies dropout to the attention probabilities (profile key "attention_dropout";
  // p > 0). A fused kernel is charged its class's measured share (model::LayerParallel::
  // attention_dropout); the unfused path prices its dropout as a pass of its own either way.
  bool attention_dropout = false;
  // Under sequence parallelism the qkv and fc1 linears save their all-gathered input (profile key
  // "tp_saves_gathered_input"; model::LayerParallel::tp_saves_gathered_input). False: Megatron's
  // split input, gathered again in the backward.
  bool tp_saves_gathered_input = false;
  // With grouped-query attention, K and V are repeated to the query heads' count before the
  // attention kernel (profile key "gqa_expand"; model::LayerParallel::gqa_expand).
  bool gqa_expand = false;
  // Transformer Engine's userbuffers settings for each GEMM of a dense layer, offered to configs
  // that ask for options.tp_comm_overlap (profile key "tp_comm_overlap": TE's ub_cfgs, an entry
  // {"method", "num_sm", "num_splits"} for each of model::kTpOverlapGemms). Empty: not offered.
  std::optional<model::TpOverlapCfgs> tp_comm_overlap;
  // Features the stack did not have, which a config naming it may not ask for (profile key
  // "lacks": a list of "sequence_parallel", "flash_attention", "tensor_parallel",
  // "pipeline_parallel", "context_parallel"). Without flash attention a config's
  // options.flash_attention defaults to false; --search offers no mesh the stack cannot run.
  bool has_sequence_parallel = true;
  bool has_flash_attention = true;
  bool has_tensor_parallel = true;
  bool has_pipeline_parallel = true;
  bool has_context_parallel = true;
  // The stack runs its linears in FP8 the way Transformer Engine does (profile key "fp8":
  // "transformer-engine"; options.fp8, docs/ACCURACY.md item 50). False: a config asking for FP8
  // is refused.
  bool has_fp8 = false;
  // The ZeRO stages the stack runs, the ones the profile's figures describe (profile key
  // "zero_stages", a list of 0 to 3; Megatron-LM of 2021 and 2022 keeps whole replicas, FSDP stacks
  // shard nothing or gradients and parameters but never the optimizer alone): a config asking for
  // another is refused, and neither would_fit nor --search offers one. Default: all four.
  std::array<bool, 4> zero_stages = {true, true, true, true};
  // The stack's data parallelism without sharding (options.zero 0) runs only when nothing else
  // splits the model (profile key "replicate_alone": torchtitan's DDP, 'DDP has not supported > 1D
  // parallelism'): with mesh.tp, mesh.pp or mesh.cp above 1 a config at stage 0 is refused.
  bool replicate_alone = false;
  bool runs_zero(int stage) const {
    return stage >= 0 && stage < 4 && zero_stages[static_cast<size_t>(stage)];
  }
  // The pipeline schedules the stack runs, by meshscope's family names (profile key "schedules",
  // each stack's source in its profile): --search proposes no other, and predict says of a config
  // that asks for another that its rows are a what-if. Empty: not stated, every family. The
  // families without a pipeline (dp, tp) are any stack's.
  std::vector<std::string> schedules;
  bool runs_schedule(std::string_view family) const {
    return schedules.empty() || family == "dp" || family == "tp" ||
           std::find(schedules.begin(), schedules.end(), family) != schedules.end();
  }
  // The highest ZeRO stage the stack runs beside pipeline parallelism (profile key
  // "pipelined_zero"; DeepSpeed's PipelineEngine refuses stages 2 and 3): a config with mesh.pp > 1
  // and a higher options.zero is refused. Default 3: no limit.
  int pipelined_zero = 3;
  // With pipeline parallelism, ZeRO-3 gathers a stage's parameters once a step and reduces its
  // gradients once a step, holding both whole between microbatches (profile key
  // "pipelined_sharding": "per-step"; torch.distributed.pipelining with FSDP2, as torchtitan runs
  // it: docs/ACCURACY.md item 44). False ("per-microbatch"): each microbatch, as without it.
  bool pipelined_sharding_per_step = false;
  // What FSDP keeps whole, in the compute type, while the loss runs, where ZeRO-3 gathers each
  // microbatch (profile key "held_unsharded": {"root", "last_layers"}; docs/ACCURACY.md item 48):
  // the root unit (the parameters outside the wrapped blocks: embedding, final norm, output),
  // which FSDP1 and FSDP2 do not reshard after the forward, and the last `last_layers` blocks
  // (torchtitan keeps its last block whole). Default: nothing.
  // "prefetch_layers": the blocks it gathers ahead in the backward, held with the root, the
  // output layer's gradient and the last block's gradients when that block's are reduced (item
  // 49).
  struct HeldUnsharded {
    bool root = false;
    int last_layers = 0;
    int prefetch_layers = 0;
  };
  HeldUnsharded held_unsharded;
  // Recomputation granularities it offers ("none", "selective", "full", "op-selective").
  std::vector<std::string> recompute;
  // Its full recomputation stops once the backward has every tensor it saved (profile key
  // "recompute_early_stop"; model::LayerParallel::recompute_early_stop): PyTorch's non-reentrant
  // torch.utils.checkpoint from 2.1 on. False: the whole layer's forward runs again.
  bool recompute_early_stop = false;
  // Per hardware catalog name: the development set's residuals for this framework there
  // (tests/sim/predict_published_test.cpp keeps them equal to the current model's).
  std::map<std::string, Residuals> residuals;
};

// Parses one profile; `where` names the file in errors ("where: key 'x': why").
Framework parse_framework(const nlohmann::json& j, const std::string& where);
// Transformer Engine's userbuffers settings as TE's ub_cfgs write them, one entry for each of
// model::kTpOverlapGemms: {"method": "ring_exchange" | "pipeline" | "bulk", "num_sm": SMs (ring
// exchange: 1 unless given), "num_splits": chunks (pipeline only)}. A profile's "tp_comm_overlap"
// and a config's options.tp_comm_overlap_cfg; errors name `where` and `key`.
model::TpOverlapCfgs parse_tp_overlap_cfgs(const nlohmann::json& j, const std::string& where,
                                           const std::string& key);
// The top-level keys a profile may hold (docs/ACCURACY.md, "Framework profiles", lists each).
std::vector<std::string> framework_keys();
Framework load_framework_file(const std::string& path);
// Directories searched for "<name>.json": the "frameworks" folder beside each catalog directory
// of catalog_dirs() (the source tree's sim/cost/frameworks, the copy next to the executable).
std::vector<std::string> framework_dirs();
// `name_or_path`: a profile name ("megatron-2022") or a path ending in .json. An unknown name
// throws std::runtime_error listing the profiles found. Each profile is read once per process.
Framework find_framework(const std::string& name_or_path);
std::vector<std::string> list_frameworks();

// The fraction of peak the attention kernel `k` reaches on `hw` (catalog
// efficiency.attention_flash2, attention_flash3; flash1 at half FA2's rate; FlashAttention-3
// needs Hopper: without an FA3 rate the FA2 rate is used).
double attention_efficiency(const Hardware& hw, AttentionKernel k);

// The forward and backward rates of attention_efficiency(hw, k) for a kernel whose forward runs
// `forward_speedup` times its backward's fraction of peak: a forward and its backward together
// (1 + model::kAttentionBackwardFlopRatio FLOPs) take the time they take at the combined rate,
// so a step without recomputation is priced as before and the recomputed forward at the faster
// rate.
struct AttentionRates {
  double forward = 0;
  double backward = 0;
};
AttentionRates attention_rates(const Hardware& hw, AttentionKernel k, double forward_speedup);

// The head dimension the FlashAttention kernel `k` computes at for heads of `d`: each kernel is
// compiled for a few head dimensions and runs a smaller one at the next, its loads masked and its
// tensor-core tiles as wide as the compiled one (docs/ACCURACY.md, item 13).
//  - flash1: the next power of two, at least 16. MPT's Triton port (llm-foundry
//    llmfoundry/models/layers/flash_attn_triton.py: BLOCK_HEADDIM = max(next_power_of_2(d), 16));
//    the CUDA FlashAttention-1 (csrc/flash_attn/fmha_api.cpp, run_fmha_fwd / run_fmha_bwd: hdim 32,
//    64, 128) agrees above 16.
//  - flash2: 32, 64, 96, 128, 160, 192, 256 (csrc/flash_attn/src/static_switch.h, HEADDIM_SWITCH).
//  - flash3: 64, 96, 128, 192, 256 (hopper/flash_api.cpp, run_mha_fwd).
// Beyond the largest compiled dimension (no kernel runs it), and for the other kernels, `d`.
int64_t kernel_head_dim(AttentionKernel k, int64_t d);

// The default of a config that names no framework.
inline constexpr std::string_view kDefaultFramework = "megatron-core-2024";

}  // namespace meshscope::cost
