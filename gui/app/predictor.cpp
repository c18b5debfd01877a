// Binds the what-if view to the simulator (sim/predict's simulate).
#include "gui/app/predictor.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

#include "sim/cost/hardware.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/generators.h"

namespace meshscope::gui {
namespace {

int64_t number(const std::string& key, const std::string& value) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v < 1) {
    throw std::invalid_argument("what-if: model field " + key + "=" + value +
                                " is not a positive integer");
  }
  return v;
}

// The model of a description as the executor and the simulator write them: "mlp L=8 h=256
// batch=32", "gpt L=24 h=2304 heads=24 seq=2048 V=51200", "vgg16 image=224", "chain",
// "classifier". Empty: the executor's default MLP.
void apply_model(const std::string& description, predict::PredictConfig& pc) {
  const auto words = description_words(description.empty() ? "mlp L=8 h=256" : description);
  const std::string kind = !words.empty() && words[0].first.empty() ? words[0].second : "";
  if (kind == "mlp") {
    pc.model = predict::ModelKind::kMlp;
  } else if (kind == "gpt") {
    pc.model = predict::ModelKind::kGpt;
  } else if (kind.starts_with("vgg")) {
    pc.model = predict::ModelKind::kVgg;
  } else if (kind == "chain") {
    pc.model = predict::ModelKind::kChain;
  } else if (kind == "classifier") {
    pc.model = predict::ModelKind::kClassifier;
  } else {
    throw std::invalid_argument("what-if: cannot simulate the model '" + description + "'");
  }
  for (const auto& [key, value] : words) {
    if (key.empty() || key == "batch") continue;
    if (pc.model == predict::ModelKind::kMlp && key == "L")
      pc.mlp_layers = static_cast<int>(number(key, value));
    if (pc.model == predict::ModelKind::kMlp && key == "h")
      pc.mlp_hidden = static_cast<int>(number(key, value));
    if (pc.model == predict::ModelKind::kGpt) {
      if (key == "L") pc.gpt.layers = number(key, value);
      if (key == "h") pc.gpt.hidden = number(key, value);
      if (key == "heads") pc.gpt.heads = number(key, value);
      if (key == "seq") pc.gpt.seq = number(key, value);
      if (key == "V") pc.gpt.vocab = number(key, value);
    }
    if (pc.model == predict::ModelKind::kVgg && key == "image") pc.vgg.image = number(key, value);
  }
  // The executor's workloads train with SGD; predict them with the optimizer they use.
  if (pc.model == predict::ModelKind::kMlp || pc.model == predict::ModelKind::kChain ||
      pc.model == predict::ModelKind::kClassifier) {
    pc.optimizer = predict::Optimizer::kSgd;
  }
}

predict::PredictConfig to_predict_config(const WhatIfConfig& c,
                                         const std::string& default_hardware) {
  predict::PredictConfig pc;
  apply_model(c.model, pc);
  const auto family = schedule::parse_family(c.schedule);
  if (!family) throw std::invalid_argument("what-if: unknown schedule '" + c.schedule + "'");
  pc.schedule = *family;
  // The what-if's chunk count, kept inside what the family takes (families.h).
  const schedule::FamilyInfo& fi = schedule::info(*family);
  pc.virtual_stages = std::clamp(c.virtual_stages, fi.min_virtual_stages,
                                 fi.max_virtual_stages > 0 ? fi.max_virtual_stages : 1 << 20);
  pc.mesh = mesh::MeshShape{c.dp, c.pp, c.tp};
  pc.micro_batch = std::max<int64_t>(c.micro_batch, 1);
  pc.global_batch = pc.micro_batch * c.dp * c.microbatches;
  pc.gpu = c.hardware.empty() ? default_hardware : c.hardware;
  return pc;
}

}  // namespace

std::optional<Predictor> make_predictor() {
  Predictor p;
  for (const auto& f : schedule::kFamilies) p.schedules.emplace_back(f.name);
  p.hardware = cost::list_hardware();
  // Measured runs on these machines come from the CPU backend: predict on the same hardware
  // unless the panel picks another.
  p.default_hardware =
      std::find(p.hardware.begin(), p.hardware.end(), "cpu-local") != p.hardware.end()
          ? "cpu-local"
          : (p.hardware.empty() ? "" : p.hardware.front());
  p.simulate = [hw = p.default_hardware](const WhatIfConfig& c) {
    predict::SimulateOptions options;
    options.expand_replicas = true;  // every device of the mesh gets its row and cell
    return predict::simulate(to_predict_config(c, hw), options).timeline;
  };
  return p;
}

}  // namespace meshscope::gui
