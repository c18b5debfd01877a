// The configuration of one prediction (model, mesh, batch, schedule, cluster, options) as read
// from the JSON of `meshscope predict --config`, and sweeps: any value given as a list expands
// into one configuration per combination.
//
//   {"model": {"kind": "gpt", "layers": 24, "hidden": 2304, "heads": 24, "seq": 2048, "vocab": 51200},
//    "mesh": {"dp": 16, "tp": 1, "pp": 1},
//    "batch": {"global": 512, "micro": 1},
//    "schedule": "1f1b", "virtual_stages": 1,
//    "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
//    "options": {"recompute": "none", "sequence_parallel": false, "precision": "bf16", "zero": 0}}
//
// "framework": "megatron-core-2024" (the default; see sim/cost/frameworks/) names the training
// framework whose kernels and overlap the prediction assumes.
// Further keys: model.{kv_heads, ffn, gated_mlp, experts, top_k, expert_ffn, tied_embeddings,
// learned_positions, layers_per_stage} (gpt), model.{image, classes} (vgg), model.{layers, hidden}
// (mlp), mesh.{cp, ep}, cluster.{placement ("tp,cp,pp,dp"), nodes}, options.{flash_attention,
// optimizer ("adam"|"sgd"), symmetry ("auto"|"on"|"off")}.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/hardware.h"
#include "sim/cost/topology.h"
#include "sim/model/gpt.h"
#include "sim/model/transformer.h"
#include "sim/model/vgg.h"
#include "sim/model/workload.h"
#include "sim/schedule/generators.h"

namespace meshscope::predict {

enum class ModelKind : uint8_t { kGpt = 0, kVgg, kMlp, kChain, kClassifier, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(ModelKind::kCount)> kModelKindNames = {
    "gpt", "vgg", "mlp", "chain", "classifier"};
constexpr std::string_view name(ModelKind k) { return kModelKindNames[static_cast<size_t>(k)]; }

enum class Optimizer : uint8_t { kAdam = 0, kSgd, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Optimizer::kCount)> kOptimizerNames = {
    "adam", "sgd"};

enum class Symmetry : uint8_t { kAuto = 0, kOn, kOff, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Symmetry::kCount)> kSymmetryNames = {
    "auto", "on", "off"};

struct PredictConfig {
  ModelKind model = ModelKind::kGpt;
  model::GptSpec gpt;
  model::VggSpec vgg;
  int mlp_layers = 8;   // mlp: blocks h -> 4h -> h
  int mlp_hidden = 256;
  std::vector<int> layers_per_stage;  // gpt only; empty: split evenly

  mesh::MeshShape mesh{1, 1, 1};
  int cp = 1;  // context parallel (gpt)
  int ep = 1;  // expert parallel (gpt with experts; divides dp)

  int64_t global_batch = 1;  // samples (sequences) per step, all replicas
  int64_t micro_batch = 1;   // samples per microbatch

  schedule::Family schedule = schedule::Family::kOneFOneB;
  int virtual_stages = 1;

  std::string gpu = "a100-80gb";  // catalog name or path to a .json
  // Training framework profile (sim/cost/frameworks/<name>.json or a path to a .json): its
  // attention kernel, elementwise fusions and communication overlap. Top-level key "framework".
  std::string framework = "megatron-core-2024";
  int gpus_per_node = 0;  // 0: the catalog's devices_per_node
  cost::DimOrder placement = cost::kDefaultOrder;

  model::Recompute recompute = model::Recompute::kNone;
  bool sequence_parallel = false;
  bool flash_attention = true;
  cost::Precision precision = cost::Precision::kBf16;
  int zero = 0;
  Optimizer optimizer = Optimizer::kAdam;
  Symmetry symmetry = Symmetry::kAuto;

  int microbatches() const;  // per replica: global / (micro x dp)
  int64_t gpus() const { return int64_t{mesh.dp} * mesh.pp * mesh.tp * cp; }
};

// Parses one configuration; `where` (the file name) starts every error message, which names the
// key: "run.json: key 'mesh.dp': must be an integer >= 1". Unknown keys are errors too.
PredictConfig parse_config(const nlohmann::json& j, const std::string& where);

// One point of a sweep: its configuration and the values of the swept keys ("mesh.tp" -> "4").
struct SweepPoint {
  PredictConfig config;  // default when `error` is set
  nlohmann::json json;
  std::vector<std::pair<std::string, std::string>> swept;
  std::string error;  // why this combination is no valid configuration ("key 'mesh.tp': ...")
};

// Expands lists into their Cartesian product (first key outermost); a config without lists is a
// sweep of one. A combination that is no valid configuration (tp = 16 for 24 heads) becomes a
// point with `error`; throws std::runtime_error naming the key when there is no list, when every
// point is invalid (the first point's error), or for a sweep of more than kMaxSweepPoints.
inline constexpr size_t kMaxSweepPoints = 100000;
std::vector<SweepPoint> expand_sweep(const nlohmann::json& j, const std::string& where);

// Reads and parses a JSON file (malformed JSON: the byte offset is in the message).
nlohmann::json load_json_file(const std::string& path);

}  // namespace meshscope::predict
