// Conversions between PredictConfig's model and the Timeline's workload descriptor.
#include "sim/predict/run_workload.h"

#include <stdexcept>
#include <string>
#include <type_traits>

#include "traces/enum_names.h"

namespace meshscope::predict {

traces::WorkloadDescriptor workload_descriptor(const PredictConfig& c) {
  traces::WorkloadDescriptor w;
  // The two enums share their names (run_descriptor.h).
  w.kind = traces::parse_model_kind(name(c.model)).value_or(traces::ModelKind::kUnknown);
  switch (c.model) {
    case ModelKind::kGpt:
      w.layers = c.gpt.layers;
      w.hidden = c.gpt.hidden;
      w.heads = c.gpt.heads;
      w.seq = c.gpt.seq;
      w.vocab = c.gpt.vocab;
      break;
    case ModelKind::kVgg:
      w.image = c.vgg.image;
      break;
    case ModelKind::kMlp:
      w.layers = c.mlp_layers;
      w.hidden = c.mlp_hidden;
      break;
    case ModelKind::kMoe:
      w.layers = c.mlp_layers;
      w.hidden = c.mlp_hidden;
      w.experts = c.moe_experts;
      w.top_k = c.moe_top_k;
      w.capacity_factor = c.moe_capacity_factor;
      w.ep = c.ep;
      break;
    default:
      break;
  }
  w.batch = c.global_batch;
  return w;
}

void apply_workload(const traces::WorkloadDescriptor& w, PredictConfig& c) {
  const auto kind = traces::parse_enum<ModelKind>(kModelKindNames, traces::name(w.kind));
  if (!kind) {
    throw std::invalid_argument("what-if: the run does not say which model it trained (" +
                                std::string(traces::name(w.kind)) + ")");
  }
  c.model = *kind;
  auto keep = [](int64_t v, auto& field) {
    if (v > 0) field = static_cast<std::remove_reference_t<decltype(field)>>(v);
  };
  switch (c.model) {
    case ModelKind::kGpt:
      keep(w.layers, c.gpt.layers);
      keep(w.hidden, c.gpt.hidden);
      keep(w.heads, c.gpt.heads);
      keep(w.seq, c.gpt.seq);
      keep(w.vocab, c.gpt.vocab);
      break;
    case ModelKind::kVgg:
      keep(w.image, c.vgg.image);
      break;
    case ModelKind::kMlp:
      keep(w.layers, c.mlp_layers);
      keep(w.hidden, c.mlp_hidden);
      break;
    case ModelKind::kMoe:
      keep(w.layers, c.mlp_layers);
      keep(w.hidden, c.mlp_hidden);
      keep(w.experts, c.moe_experts);
      keep(w.top_k, c.moe_top_k);
      keep(w.ep, c.ep);
      if (w.capacity_factor > 0) c.moe_capacity_factor = w.capacity_factor;
      break;
    default:
      break;
  }
  if (c.model == ModelKind::kMlp || c.model == ModelKind::kChain ||
      c.model == ModelKind::kClassifier || c.model == ModelKind::kMoe) {
    c.optimizer = Optimizer::kSgd;
  }
}

}  // namespace meshscope::predict
