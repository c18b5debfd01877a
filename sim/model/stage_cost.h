// What one pipeline stage of a workload costs per microbatch: the ops it runs in each phase (for
// the simulator's cost model), its parameters, and the memory and traffic it causes.
// Every workload, executable (chain, classifier, MLP, MoE) or simulated only (GPT, VGG), produces
// these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/collective.h"

namespace meshscope::model {

enum class OpKind : uint8_t {
  kGemm = 0,         // dense matrix multiply m x n x k
  kElementwise = 1,  // bias, activation, residual add, dropout, optimizer update
  kNorm = 2,         // layer norm / RMS norm
  kAttention = 3,    // softmax(QK^T)V core (flash-attention style, counted as one op)
  kLoss = 4,         // softmax cross-entropy, MSE
  kConv = 5,         // convolution (implicit GEMM)
  kCount
};

// One op of one microbatch on one tensor-parallel rank.
struct OpCost {
  std::string name;  // "mlp.fc1", "attn.qkv", ...
  OpKind kind = OpKind::kGemm;
  double flops = 0;  // floating-point operations (a multiply-add counts 2)
  double bytes = 0;  // bytes read + written from device memory
  // GEMM shape (C[m x n] = A[m x k] B[k x n]) where kind is kGemm or kConv; for kAttention, m is
  // the query tokens of one sequence (the kernel's rate depends on it), k the head dimension the
  // kernel computes at and n 0; 0 otherwise.
  int64_t m = 0, n = 0, k = 0;
  // kAttention: the backward kernel (dQ, dK, dV), priced at its own rate; false: the forward,
  // also when recomputation runs it again.
  bool backward = false;
  // kAttention: the kernel applies dropout to the attention probabilities and is charged for it
  // (cost::attention_dropout_share; model::LayerParallel::attention_dropout).
  bool dropout = false;
  // kGemm: its operands are FP8 (Transformer Engine's linears under options.fp8), priced against
  // the FP8 peak (cost::gemm_fp8_efficiency); the output in the run's element type. Another kind:
  // a pass that casts or transposes into FP8 around such a GEMM (the breakdown's fp8_casts).
  bool fp8 = false;
};

// FLOPs of a fused attention backward over its forward: five GEMMs against two (the forward's
// S = QK^T and O = PV; the backward's S again, dV, dP, dQ, dK), as FlashAttention's and Triton's
// benchmarks count them.
inline constexpr double kAttentionBackwardFlopRatio = 2.5;

// Which collective and over which group of a simulated model (GPT with sequence, context or expert
// parallelism); the defaults are Megatron's tp all-reduce, which is all the executable models use.
using CommOp = traces::CollectiveOp;  // the one collective descriptor's op (traces/collective.h)
enum class CommAxis : uint8_t { kTp = 0, kCp = 1, kEp = 2 };

// A tensor-parallel collective inside a stage's compute (Megatron: all-reduce after the
// row-parallel linear in forward, after the column-parallel linear's input grad in backward).
struct TpCollective {
  std::string name;
  int64_t bytes = 0;  // payload per rank
  CommOp op = CommOp::kAllReduce;
  CommAxis axis = CommAxis::kTp;
  bool overlapped = false;  // hidden behind the phase's attention compute (context parallel ring)
  // The GEMM of its own layer it runs beside (LayerParallel::tp_backward_overlap): the phase
  // takes what the GEMM cannot cover, and the SMs the collective holds while both run. Empty: it
  // runs alone.
  std::optional<OpCost> beside = std::nullopt;
  // That GEMM is a weight gradient: where the input and weight gradients run apart (zero-bubble
  // schedules' I and W), the collective runs alone in I.
  bool beside_weight_grad = false;
  // Of `beside`, the share the collective can run beside (a ring exchange computes its last
  // chunk after the last receive: (tp - 1) / tp), and of the collective, the share left after the
  // GEMM (a pipelined reduce-scatter's last chunk: 1 / num_splits).
  double gemm_share = 1;
  double tail_share = 0;
  int sms = 0;  // SMs it holds while beside the GEMM; 0: the catalog's collective_ctas (NCCL)
};

struct StageCost {
  int stage = 0;
  std::vector<OpCost> forward;
  std::vector<OpCost> input_grad;         // backward w.r.t. inputs (the I of zero-bubble schedules)
  std::vector<OpCost> weight_grad;        // backward w.r.t. weights (the W)
  std::vector<TpCollective> tp_forward;   // per microbatch
  std::vector<TpCollective> tp_backward;  // per microbatch
  int64_t parameters = 0;                 // held by one tp rank
  // Of `parameters`, those of the experts of moe blocks this rank holds (its ep shard); the rest
  // are dense (replicated over dp).
  int64_t expert_parameters = 0;
  int64_t activation_bytes = 0;  // kept from a microbatch's forward until its backward, per tp rank
  // Held only while one op runs, on top of the activations kept (the loss's working tensors beyond
  // what it saves), per tp rank.
  int64_t working_bytes = 0;
  // The stage that computes the loss: what its output head keeps for the backward (the final
  // hidden state and the loss's saved tensors) and its weights (whose gradient a sharded stack
  // holds whole until the step's last reduction), per tp rank. What its last layer keeps.
  int64_t head_activation_bytes = 0;
  int64_t head_parameters = 0;
  int64_t last_layer_activation_bytes = 0;
  int64_t output_bytes = 0;  // activation sent to the next stage per microbatch (grad back: same)
  int64_t input_bytes = 0;   // activation received from the previous stage per microbatch
  // Of activation_bytes, what the weight-gradient pass (W) still needs once the input-gradient
  // pass (I) is done (zero-bubble schedules); 0: unknown, the simulator assumes half.
  int64_t weight_grad_bytes = 0;

  double forward_flops() const;
  double input_grad_flops() const;
  double weight_grad_flops() const;
};

double total_flops(const std::vector<OpCost>& ops);
double total_bytes(const std::vector<OpCost>& ops);

}  // namespace meshscope::model
