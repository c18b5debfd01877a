// The executable workloads: the seed chain, the MNIST-shaped classifier, the deep MLP and the
// mixture-of-experts stack, as a list of partition units (layers) of linears with their
// tensor-parallel split and a loss.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/activation.h"

namespace meshscope::model {

enum class WorkloadKind : uint8_t { kChain = 0, kClassifier = 1, kMlp = 2, kMoe = 3, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(WorkloadKind::kCount)>
    kWorkloadKindNames = {"chain", "classifier", "mlp", "moe"};
constexpr std::string_view name(WorkloadKind k) {
  return kWorkloadKindNames[static_cast<size_t>(k)];
}
std::optional<WorkloadKind> parse_workload_kind(std::string_view s);

using kernels::Activation;  // the kernels' enum: kNone, kRelu, kGelu (tanh form)
enum class LossKind : uint8_t { kMse = 0, kSoftmaxCrossEntropy = 1 };

// How a linear is split over the tp ranks (Megatron-LM): column-parallel splits the outputs (its
// input is replicated, its output sharded), row-parallel splits the inputs (input sharded, partial
// outputs all-reduced, bias added once after). Replicated: every tp rank holds all of it.
enum class TpSplit : uint8_t { kReplicated = 0, kColumn = 1, kRow = 2 };

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::kMlp;
  int layers = 8;     // mlp, moe: blocks; ignored by chain (3) and classifier (2)
  int hidden = 256;   // mlp, moe: h; ignored by chain and classifier (784 -> 256 -> 10)
  int batch = 32;     // global batch per step, in samples, over all dp replicas and microbatches
  float lr = 0.05f;   // SGD learning rate
  uint64_t seed = 1;  // weights and data
  // Also compute the gradient with respect to the input data (normally skipped: nothing uses
  // it). Makes stage 0 cost exactly what the other stages cost, for bubble measurements.
  bool data_gradient = false;
  // moe: experts per block, the experts each token is routed to, the capacity factor (capacity per
  // expert and routing group: expert_capacity below), and the expert-parallel degree a run shards
  // each block's experts over (1: every dp replica holds every expert; otherwise the executor
  // needs it to equal dp: profiler/exec/rank_plan.h). Ignored by the other kinds.
  int experts = 4;
  int top_k = 1;
  double capacity_factor = 1.0;
  int ep = 1;
};

// y = act(x W + b) with W stored in x out, row-major (full, unsplit shapes).
struct LinearSpec {
  std::string name;  // "block3.fc1"
  int in = 0;
  int out = 0;
  Activation act = Activation::kNone;
  TpSplit split = TpSplit::kReplicated;
  int expert = -1;  // moe: the expert (within its block) this linear belongs to; -1: none
};

// kDense: the linears run one after the other. kMoe: a mixture-of-experts block, whose linears
// are the router (h -> experts) then each expert's fc1 (h -> 4h, GELU) and fc2 (4h -> h); its
// output is input + sum over the token's kept top-k choices of gate * expert(input).
enum class UnitKind : uint8_t { kDense = 0, kMoe = 1 };
// Positions of a moe unit's linears.
constexpr int kMoeRouter = 0;
constexpr int moe_fc1(int expert) { return 1 + 2 * expert; }
constexpr int moe_fc2(int expert) { return 2 + 2 * expert; }

// A partition unit: the smallest piece a pipeline stage holds. residual: output = input + linears.
struct Unit {
  std::string name;
  std::vector<LinearSpec> linears;
  bool residual = false;
  UnitKind kind = UnitKind::kDense;
};

struct Workload {
  WorkloadSpec spec;
  int input_dim = 0;
  int output_dim = 0;
  LossKind loss = LossKind::kMse;
  std::vector<Unit> units;

  int64_t parameters() const;
  int num_linears() const;
  // "mlp L=8 h=256 batch=32"
  std::string describe() const;
};

// Throws std::invalid_argument naming the field when the spec is out of range.
Workload make_workload(const WorkloadSpec& spec);

// The loss of a sample batch is the mean over its samples (and, for MSE, over outputs too): a
// microbatch of any size scales its summed loss by this, so microbatch losses add up to the
// full-batch mean.
double loss_scale(const Workload& w);

// Samples per microbatch: batch / (dp * microbatches). Throws std::invalid_argument when the
// global batch does not split evenly.
int microbatch_rows(int batch, int dp, int microbatches);

// Tokens one expert of a moe block takes from a routing group of `tokens` rows (the run's
// microbatch on one dp replica): ceil(capacity_factor * tokens * top_k / experts), as GShard
// (Lepikhin et al. 2020, Algorithm 1: capacity 2N/E for top-2 over a group of N tokens) and the
// Switch Transformer (Fedus et al. 2021, section 2.2: tokens per batch / experts x capacity
// factor) set it. Choices beyond it are dropped (kernels/cpu/ops.h, top_k_route).
int expert_capacity(const WorkloadSpec& spec, int tokens);

// The first expert of a moe block that ep rank `ep_rank` (of spec.ep) holds, and how many each
// holds: experts are sharded in contiguous runs, ep rank i holding [i * E / ep, (i + 1) * E / ep).
int first_local_expert(const WorkloadSpec& spec, int ep_rank);
int local_experts(const WorkloadSpec& spec);

// Per-tp-rank shapes of a linear.
int local_in(const LinearSpec& l, int tp);
int local_out(const LinearSpec& l, int tp);
// Throws std::invalid_argument when a split dimension of some linear is not divisible by tp.
void check_tp(const Workload& w, int tp);

}  // namespace meshscope::model
