// The configuration of one prediction (model, mesh, batch, schedule, cluster, options) as read
// from the JSON of `meshscope predict --config`, and sweeps: any value given as a list expands
// into one configuration per combination.
//
//   {"model": {"kind": "gpt", "layers": 24, "hidden": 2304, "heads": 24, "seq": 2048, "vocab":
//   51200},
//    "mesh": {"dp": 16, "tp": 1, "pp": 1},
//    "batch": {"global": 512, "micro": 1},
//    "schedule": "1f1b", "virtual_stages": 1,
//    "cluster": {"gpu": "a100-80gb", "gpus_per_node": 8},
//    "options": {"recompute": "none", "sequence_parallel": false, "precision": "bf16", "zero": 0}}
//
// Every key, its type, unit, default and meaning: docs/CONFIG.md.
// "framework": "megatron-core-2024" (the default; see sim/cost/frameworks/) names the training
// framework whose kernels and overlap the prediction assumes.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
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
#include "traces/json_file.h"

namespace meshscope::cost {
struct Framework;
enum class AttentionKernel : uint8_t;  // framework.h
}  // namespace meshscope::cost

namespace meshscope::predict {

enum class ModelKind : uint8_t { kGpt = 0, kVgg, kMlp, kChain, kClassifier, kMoe, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(ModelKind::kCount)>
    kModelKindNames = {"gpt", "vgg", "mlp", "chain", "classifier", "moe"};
constexpr std::string_view name(ModelKind k) { return kModelKindNames[static_cast<size_t>(k)]; }

enum class Optimizer : uint8_t { kAdam = 0, kSgd, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Optimizer::kCount)>
    kOptimizerNames = {"adam", "sgd"};

enum class Symmetry : uint8_t { kAuto = 0, kOn, kOff, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Symmetry::kCount)>
    kSymmetryNames = {"auto", "on", "off"};

// Catalog entries read once per name or path: a sweep or a search reads each file once.
class HardwareCache {
 public:
  // cost::find_hardware's entry (its errors too, as std::runtime_error), read at the first call
  // for the name.
  std::shared_ptr<const cost::Hardware> get(const std::string& name_or_path);

 private:
  std::map<std::string, std::shared_ptr<const cost::Hardware>> entries_;
  std::map<std::string, std::string> failures_;  // name -> the error it gave
};

// The catalog entry a configuration's `gpu` named when it was parsed.
struct ResolvedHardware {
  std::string gpu;  // the name it was read for: a config whose gpu changed since reads it again
  std::shared_ptr<const cost::Hardware> entry;
};

// A framework profile the caller holds for a configuration's `framework` (predict --sensitivity
// simulates the config with one figure of it changed).
struct ResolvedFramework {
  std::string framework;  // the name it stands for: a config whose framework changed reads it again
  std::shared_ptr<const cost::Framework> entry;
};

struct PredictConfig {
  ModelKind model = ModelKind::kGpt;
  model::GptSpec gpt;
  model::VggSpec vgg;
  int mlp_layers = 8;  // mlp: blocks h -> 4h -> h; moe: its blocks (sim/model/workload.h)
  int mlp_hidden = 256;
  // moe: experts per block, experts per token, capacity factor (the executable moe workload; its
  // routing group is a microbatch, batch.micro tokens)
  int moe_experts = 4;
  int moe_top_k = 1;
  double moe_capacity_factor = 1.0;
  std::vector<int> layers_per_stage;  // gpt only; empty: split evenly

  mesh::MeshShape mesh{1, 1, 1};
  int cp = 1;  // context parallel (gpt)
  int ep = 1;  // expert parallel (gpt with experts, moe; divides dp)

  int64_t global_batch = 1;  // samples (sequences) per step, all replicas
  int64_t micro_batch = 1;   // samples per microbatch

  schedule::Family schedule = schedule::Family::kOneFOneB;
  int virtual_stages = 1;

  std::string gpu = "a100-80gb";  // catalog name or path to a .json
  // Training framework profile (sim/cost/frameworks/<name>.json or a path to a .json): its
  // attention kernel, elementwise fusions and communication overlap. Top-level key "framework".
  std::string framework = "megatron-core-2024";
  int gpus_per_node = 0;  // 0: the catalog's devices_per_node
  int nodes = 0;          // 0: as many as the mesh needs; else nodes x per node = gpus()
  int network_gbps = 0;   // a node's network bandwidth, one way, Gb/s; 0: the catalog's NICs
  // NCCL's NVLink SHARP where the catalog entry has it (false: NCCL_NVLS_ENABLE=0).
  bool nvls = true;
  ResolvedHardware hardware;  // set by parse_config; empty: simulate reads the catalog
  ResolvedFramework profile;  // empty: simulate reads the profile `framework` names
  cost::DimOrder placement = cost::kDefaultOrder;

  model::Recompute recompute = model::Recompute::kNone;
  int recompute_every = 1;  // with kFull: every n-th layer is recomputed (1: every layer)
  bool sequence_parallel = false;
  // Transformer Engine's userbuffers overlap of every tp collective with a GEMM (Megatron-core
  // --tp-comm-overlap), as the framework profile's tp_comm_overlap says; sequence parallel only.
  bool tp_comm_overlap = false;
  // The run's own userbuffers settings in place of the profile's (options.tp_comm_overlap_cfg:
  // Megatron-LM's --tp-comm-overlap-cfg, NeMo's model.ub_tp_comm_overlap_cfg).
  std::optional<model::TpOverlapCfgs> tp_comm_overlap_cfg;
  bool flash_attention = true;
  // The fused attention's kernel class for this run in place of the profile's
  // (options.flash_attention "flash1" | "flash2" | "flash3"); unset: the profile's.
  std::optional<cost::AttentionKernel> attention_kernel;
  cost::Precision precision = cost::Precision::kBf16;
  // The type the run reduces its data-parallel gradients in, and keeps them in where the profile's
  // gradient_bytes is "reduced" (options.grad_reduce_dtype: Megatron-LM's --grad-reduce-in-bf16,
  // NeMo's optim.grad_sync_dtype); unset: the profile's grad_reduce_bytes.
  std::optional<cost::Precision> grad_reduce_dtype;
  int zero = 0;
  // Transformer Engine's FP8 linears (options.fp8; docs/ACCURACY.md item 50): the dense layers'
  // qkv, proj, fc1 and fc2 compute on FP8 operands (model::LayerParallel::fp8). fp8_params: the
  // weights are held in FP8 (NeMo's fp8_params, megatron-core's --fp8-param-gather) in place of
  // bf16 weights with a cached FP8 copy; memory only.
  bool fp8 = false;
  bool fp8_params = false;
  int shard_group = 0;  // ZeRO-3: ranks of dp sharing one copy (HSDP); 0: all of dp
  Optimizer optimizer = Optimizer::kAdam;
  // Bytes of optimizer state a parameter keeps, sharded as ZeRO shards the states, where the run's
  // optimizer stores other than the default (options.optimizer_state_bytes: NeMo's
  // distributed_fused_adam keeps 16-bit remainders, 10, or bf16 moments, 4; docs/ACCURACY.md
  // item 47); unset: 12 under bf16/fp16 and Adam (memory.h, state_bytes).
  std::optional<int> optimizer_state_bytes;
  Symmetry symmetry = Symmetry::kAuto;

  int microbatches() const;  // per replica: global / (micro x dp)
  int64_t gpus() const { return int64_t{mesh.dp} * mesh.pp * mesh.tp * cp; }
  // The devices over which ZeRO shards the states: shard_group's ranks of dp when set, else dp,
  // each with its cp devices, which hold the same parameters (docs/ACCURACY.md item 46).
  int zero_shards() const { return (shard_group > 0 ? shard_group : mesh.dp) * cp; }
  // The devices that hold each parameter and reduce its gradient: dp x cp (item 46).
  int data_parallel() const { return mesh.dp * cp; }
};

// Parses one configuration; `where` (the file name) starts every error message, which names the
// key: "run.json: key 'mesh.dp': must be an integer >= 1". Unknown keys are errors too. The
// catalog entry of cluster.gpu is read through `catalog` when given (else from disk).
PredictConfig parse_config(const nlohmann::json& j, const std::string& where,
                           HardwareCache* catalog = nullptr);

// Keys a configuration may hold, dotted ("model.kv_heads"), as parse_config reads them for every
// model kind: what docs/CONFIG.md must describe.
std::vector<std::string> config_keys();

// Deeper nesting than a configuration has any use for (top, section, list, list of lists) is
// refused before anything walks it recursively.
inline constexpr int kMaxConfigDepth = traces::kMaxJsonFileDepth;

// A dotted key as error messages print it: a hostile nesting's "model.a.a.a..." cut to 60 chars.
std::string shortened_key(const std::string& dotted);

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

// Reads and parses a configuration file (traces::load_json_file): every error names the file and,
// where it has one, the byte and key: malformed JSON, a key given twice, a number out of a
// double's range, nesting deeper than kMaxConfigDepth.
nlohmann::json load_json_file(const std::string& path);

// Where `predict --config NAME` finds NAME when it is not a file from the working directory: a
// relative path is tried against each configs folder (MESHSCOPE_CONFIGS, colon-separated; the
// source tree's sim/predict/configs; `configs/` next to the executable), so the README's
// `sim/predict/configs/...` and a bare `korthikanti-175b.json` work from any directory. Returns
// the path unchanged when no folder has it (the error then names the path as given).
std::string resolve_config_path(const std::string& path);

// The least any simulation of `c` holds (replicas simulated once: pp ranks, no Timeline: the
// layers built and the schedule's actions) against the memory this process may use
// (traces::memory_limit); beyond half of it the run would die in std::bad_alloc after minutes.
// parse_config refuses such a config with `key`; what builds a config from elsewhere (a trace's
// workload: calibrate, the viewer's what-if) asks this before it builds.
struct FootprintProblem {
  std::string key;  // "model.layers" or "batch.global"
  std::string reason;
};
std::optional<FootprintProblem> footprint_problem(const PredictConfig& c);

// The profile a configuration's `framework` names: the one `profile` holds for it, else read
// (cost::find_framework, and its errors).
cost::Framework framework_of(const PredictConfig& c);

// Why `c` asks for a ZeRO stage its framework does not run (cost::Framework::zero_stages), or
// not beside pipeline parallelism (cost::Framework::pipelined_zero); "" when it does not.
std::string zero_refusal(const PredictConfig& c, const cost::Framework& framework);

}  // namespace meshscope::predict
