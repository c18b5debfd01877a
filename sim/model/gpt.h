// A GPT-style decoder (embedding, L transformer layers, final norm and logits) split into pipeline
// stages: the StageCost of each stage on one tp rank, plus the model FLOPs behind MFU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/model/stage_cost.h"
#include "sim/model/transformer.h"

namespace meshscope::model {

struct GptSpec {
  int64_t layers = 24;
  int64_t hidden = 2304;
  int64_t heads = 24;
  int64_t kv_heads = 0;  // 0: = heads
  int64_t ffn = 0;       // 0: 4 x hidden
  int64_t seq = 2048;
  int64_t vocab = 51200;
  bool gated_mlp = false;
  int64_t experts = 0;
  int64_t top_k = 1;
  int64_t expert_ffn = 0;
  bool tied_embeddings = true;
  bool learned_positions = true;
};

struct GptStage {
  StageCost cost;
  int layers = 0;
  int64_t dense_parameters = 0;   // per tp rank, replicated over dp
  int64_t expert_parameters = 0;  // per tp rank, sharded over ep
};

struct GptModel {
  std::vector<GptStage> stages;
  // Megatron's model FLOPs of one microbatch, forward + backward (3 x forward), full seq x seq
  // attention, no recomputation: the numerator of MFU.
  double model_flops_per_microbatch = 0;
  int64_t total_parameters = 0;  // whole model, unsplit
  // One transformer layer's parameters on one tp rank (its experts: its ep shard).
  int64_t layer_parameters = 0;
  // Of those, the four linears' weights (LayerCost::linear_weights): what TE's FP8 copies.
  int64_t layer_linear_weights = 0;
};

// Layers per stage: even, and where they do not divide, the first and last stages give up layers
// first (they also hold the embedding and the logits), as Llama 3 405B does with 126 layers on 16.
std::vector<int> split_layers(int64_t layers, int stages);

// `layers_per_stage` empty: split_layers. `stage_owner`: the pp rank holding each stage, so that
// with LayerParallel::p2p_scatter_gather only a stage whose neighbour is on another rank gathers
// what it receives (empty: every neighbour is), and so that recompute_every counts the layers of
// each rank (empty: of the whole model, as one rank). Throws std::invalid_argument naming the bad
// field.
GptModel build_gpt(const GptSpec& spec, const LayerParallel& par, int num_stages,
                   std::vector<int> layers_per_stage = {},
                   const std::vector<int>& stage_owner = {});

}  // namespace meshscope::model
