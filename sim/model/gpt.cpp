// Assembling GPT stages from transformer layers, the embedding and the logits.
#include "sim/model/gpt.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshscope::model {
namespace {

TpCollective tp_comm(const char* name, CommOp op, double bytes) {
  TpCollective c;
  c.name = name;
  c.op = op;
  c.bytes = static_cast<int64_t>(bytes);
  return c;
}

void append(std::vector<OpCost>& to, const std::vector<OpCost>& from) {
  to.insert(to.end(), from.begin(), from.end());
}
void append(std::vector<TpCollective>& to, const std::vector<TpCollective>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

std::vector<int> split_layers(int64_t layers, int stages) {
  if (stages < 1) throw std::invalid_argument("pipeline stages must be >= 1");
  if (layers < stages)
    throw std::invalid_argument("layers (" + std::to_string(layers) +
                                ") fewer than pipeline stages (" + std::to_string(stages) + ")");
  const int64_t base = (layers + stages - 1) / stages;
  std::vector<int> split(stages, static_cast<int>(base));
  int64_t deficit = base * stages - layers;
  for (int i = 0; deficit > 0; ++i, --deficit) {
    const int stage = i % 2 == 0 ? i / 2 : stages - 1 - i / 2;
    split[stage % stages] -= 1;
  }
  return split;
}

GptModel build_gpt(const GptSpec& spec, const LayerParallel& par, int num_stages,
                   std::vector<int> layers_per_stage, const std::vector<int>& stage_owner) {
  if (spec.layers < 1 || spec.hidden < 1 || spec.heads < 1 || spec.seq < 1 || spec.vocab < 1)
    throw std::invalid_argument("model: layers, hidden, heads, seq and vocab must be >= 1");
  if (layers_per_stage.empty()) layers_per_stage = split_layers(spec.layers, num_stages);
  if (static_cast<int>(layers_per_stage.size()) != num_stages ||
      std::accumulate(layers_per_stage.begin(), layers_per_stage.end(), int64_t{0}) != spec.layers)
    throw std::invalid_argument("layers_per_stage must list " + std::to_string(num_stages) +
                                " stages summing to the model's layers");
  if (par.tp < 1 || spec.vocab % par.tp != 0)
    throw std::invalid_argument("vocab (" + std::to_string(spec.vocab) +
                                ") must be divisible by tp");

  TransformerShape shape{spec.hidden, spec.heads,      spec.kv_heads,
                         spec.ffn,    spec.gated_mlp,  spec.experts,
                         spec.top_k,  spec.expert_ffn, !spec.learned_positions};
  const LayerCost layer = transformer_layer(shape, par);
  // Layer-selective checkpointing: the layers not checkpointed are priced without recomputation.
  const bool every_nth = par.recompute == Recompute::kFull && par.recompute_every > 1;
  LayerParallel kept = par;
  kept.recompute = Recompute::kNone;
  const LayerCost plain = every_nth ? transformer_layer(shape, kept) : LayerCost{};
  // Layers before each stage on its pipeline rank: torchtitan's layer-selective checkpointing
  // counts the blocks it wraps in one process, across that rank's model chunks in stage order
  // (`_layer_sac_count`, a module global of torchtitan/distributed/activation_checkpoint.py).
  std::vector<int64_t> layers_on_rank;
  const int64_t h = spec.hidden, t = par.tp, V = spec.vocab;
  const int e = par.element_bytes;
  const double T = static_cast<double>(par.micro_batch * spec.seq / par.cp);
  const bool sp = par.sequence_parallel && t > 1;
  const double rep = sp ? 1.0 / t : 1.0;
  // What one tp rank sends to the next stage, and whether the receiver all-gathers it.
  const bool scatter = par.p2p_scatter_gather && t > 1 && !sp;
  const double p2p_share = scatter ? 1.0 / t : rep;

  GptModel model;
  for (int s = 0; s < num_stages; ++s) {
    GptStage st;
    StageCost& c = st.cost;
    c.stage = s;
    st.layers = layers_per_stage[s];
    const bool first = s == 0, last = s == num_stages - 1;
    std::vector<OpCost> wg_unused;
    if (first) {
      c.forward.push_back(elementwise("embedding", OpKind::kElementwise, T * h * rep, e, 1));
      c.weight_grad.push_back(elementwise("embedding.wgrad", OpKind::kElementwise, T * h, e, 1));
      if (t > 1)
        c.tp_forward.push_back(
            tp_comm("embedding.tp", sp ? CommOp::kReduceScatter : CommOp::kAllReduce, T * h * e));
      st.dense_parameters += V * h / t + (spec.learned_positions ? spec.seq * h : 0);
      c.activation_bytes += static_cast<int64_t>(T * h * rep);  // dropout mask
    }
    const size_t rank = static_cast<size_t>(s) < stage_owner.size() && stage_owner[s] > 0
                            ? static_cast<size_t>(stage_owner[s])
                            : 0;
    if (layers_on_rank.size() <= rank) layers_on_rank.resize(rank + 1, 0);
    for (int l = 0; l < st.layers; ++l) {
      const int64_t index = layers_on_rank[rank] + l + 1;  // counted from 1 on each rank
      const LayerCost& L = every_nth && index % par.recompute_every != 0 ? plain : layer;
      append(c.forward, L.forward);
      append(c.input_grad, L.input_grad);
      append(c.weight_grad, L.weight_grad);
      append(c.tp_forward, L.comm_forward);
      append(c.tp_backward, L.comm_backward);
      c.activation_bytes += L.activation_bytes;
      c.weight_grad_bytes += L.weight_grad_bytes;
      c.last_layer_activation_bytes = L.activation_bytes;
    }
    layers_on_rank[rank] += st.layers;
    st.dense_parameters += st.layers * layer.dense_parameters;
    st.expert_parameters += st.layers * layer.expert_parameters;
    if (last) {
      c.forward.push_back(
          elementwise("final_norm", OpKind::kNorm, T * h * rep, e, 5, par.passes.norm));
      OpCost norm_grad = c.forward.back();
      norm_grad.name = "final_norm.grad";
      norm_grad.bytes *= backward_bytes_factor(norm_grad, par.passes);
      c.input_grad.push_back(norm_grad);
      if (sp) {
        c.tp_forward.push_back(tp_comm("logits.tp_in", CommOp::kAllGather, T * h * e));
        c.tp_backward.push_back(tp_comm("logits.tp_in", CommOp::kReduceScatter, T * h * e));
      } else if (t > 1) {
        c.tp_backward.push_back(tp_comm("logits.tp_in", CommOp::kAllReduce, T * h * e));
      }
      GemmOps ops{&c.forward, &c.input_grad, &c.weight_grad};
      add_linear(ops, "logits", static_cast<int64_t>(T), h, V / t, e, 1);
      OpCost loss = elementwise("cross_entropy", OpKind::kLoss, T * V / t, 4, 6);
      loss.bytes = T * V / t * par.loss_forward_bytes;
      c.forward.push_back(loss);
      loss.name = "cross_entropy.grad";
      loss.bytes = T * V / t * par.loss_backward_bytes;
      c.input_grad.push_back(loss);
      if (t > 1) c.tp_forward.push_back(tp_comm("cross_entropy.tp", CommOp::kAllReduce, T * 4 * 3));
      if (!spec.tied_embeddings || num_stages > 1) st.dense_parameters += V * h / t;
      st.dense_parameters += 2 * h;
      c.head_activation_bytes =
          static_cast<int64_t>(T * h * e * rep + T * V / t * par.loss_saved_bytes);
      c.head_parameters = V * h / t;
      c.activation_bytes += c.head_activation_bytes;
      c.weight_grad_bytes += static_cast<int64_t>(T * h * e);
      c.working_bytes = static_cast<int64_t>(
          T * V / t * std::max(0.0, par.loss_peak_bytes - par.loss_saved_bytes));
    }
    c.parameters = st.dense_parameters + st.expert_parameters;
    c.output_bytes = last ? 0 : static_cast<int64_t>(T * h * e * p2p_share);
    c.input_bytes = first ? 0 : static_cast<int64_t>(T * h * e * p2p_share);
    if (scatter) {
      // The received activation (forward) and gradient (backward) are whole again after an
      // all-gather over tp, before the stage's first op uses them. Between two stages one rank
      // holds (a V placement's turn, every boundary with pp = 1) nothing is sent or gathered.
      auto remote = [&](int other) {
        return stage_owner.empty() || stage_owner.at(other) != stage_owner.at(s);
      };
      if (!first && remote(s - 1))
        c.tp_forward.push_back(tp_comm("p2p.gather", CommOp::kAllGather, T * h * e));
      if (!last && remote(s + 1))
        c.tp_backward.push_back(tp_comm("p2p.gather", CommOp::kAllGather, T * h * e));
    }
    model.stages.push_back(std::move(st));
  }
  const double per_layer = layer.model_flops;
  model.model_flops_per_microbatch =
      3.0 * (spec.layers * per_layer + 2.0 * par.micro_batch * spec.seq * h * V);
  // Whole-model parameters: one tp rank's share times tp, experts times ep.
  int64_t per_tp = 0;
  for (const GptStage& st : model.stages)
    per_tp += st.dense_parameters + st.expert_parameters * par.ep;
  model.total_parameters = per_tp * t;
  model.layer_parameters = layer.dense_parameters + layer.expert_parameters;
  model.layer_linear_weights = layer.linear_weights;
  // Every n-th layer of a rank, where no rank has n layers, is no layer at all: torchtitan would
  // run without checkpointing, and so would this model, but a config that asks for recomputation
  // and gets none is a mistake worth a word.
  const int64_t most =
      layers_on_rank.empty() ? 0 : *std::max_element(layers_on_rank.begin(), layers_on_rank.end());
  if (every_nth && most < par.recompute_every)
    throw std::invalid_argument(
        "key 'options.recompute_every': " + std::to_string(par.recompute_every) +
        " is more than the " + std::to_string(most) +
        " layers of any pipeline rank: no layer would be recomputed (" +
        "layers are counted on each rank; give at most " + std::to_string(most) +
        ", or recompute \"none\")");
  return model;
}

}  // namespace meshscope::model
