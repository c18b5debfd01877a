// Parsing one prediction config: every key read, checked and named in its errors. The top level,
// mesh, batch, schedule, cluster, framework and options are read here; the model, and the checks
// of its shape against the rest, in config_model.cpp.
#include "sim/predict/config.h"

#include <algorithm>
#include <array>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/cost/framework.h"
#include "sim/predict/config_parts.h"
#include "sim/predict/footprint.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"

namespace meshscope::predict {
namespace {

using config_parts::check_shapes;
using config_parts::parse_model;
using config_parts::Reader;
using nlohmann::json;

std::string family_names() {
  std::string all;
  for (const auto& info : schedule::kFamilies)
    all += (all.empty() ? "" : ", ") + std::string(info.name);
  return all;
}

// mesh.*: the parallelism sizes, and what each needs of the model read before.
void parse_mesh(Reader& mesh, PredictConfig& c) {
  c.mesh.dp = static_cast<int>(mesh.integer("dp", 1));
  c.mesh.tp = static_cast<int>(mesh.integer("tp", 1));
  c.mesh.pp = static_cast<int>(mesh.integer("pp", 1));
  c.cp = static_cast<int>(mesh.integer("cp", 1));
  c.ep = static_cast<int>(mesh.integer("ep", 1));
  if (c.mesh.dp % c.ep != 0)
    mesh.fail("ep", "must divide mesh.dp (experts are sharded inside the dp group)");
  if (c.ep > 1 && c.model != ModelKind::kMoe && c.gpt.experts == 0)
    mesh.fail("ep", "needs model.experts > 0 (a gpt with experts, or the moe model)");
  if (c.cp > 1 && c.model != ModelKind::kGpt)
    mesh.fail("cp", "context parallelism needs a gpt model");
  mesh.check_unknown();
}

// batch.*: the microbatch and the global batch, a whole number of microbatches per replica.
void parse_batch(Reader batch, PredictConfig& c) {
  c.micro_batch = batch.integer("micro", 1);
  c.global_batch = batch.integer("global", c.micro_batch * c.mesh.dp);
  if (c.global_batch % (c.micro_batch * c.mesh.dp) != 0)
    batch.fail("global", std::to_string(c.global_batch) +
                             " is not divisible by batch.micro x mesh.dp = " +
                             std::to_string(c.micro_batch * c.mesh.dp));
  batch.check_unknown();
}

// schedule and virtual_stages (top-level keys): the family, and its chunks per rank given alone or
// by family.
void parse_schedule(Reader& top, PredictConfig& c) {
  if (top.has("schedule")) {
    const std::string s = top.string("schedule", "1f1b");
    const auto f = schedule::parse_family(s);
    if (!f) top.fail("schedule", "'" + s + "' is not one of " + family_names());
    c.schedule = *f;
  }
  const schedule::FamilyInfo& family = schedule::info(c.schedule);
  if (top.has("virtual_stages") && top.at("virtual_stages").is_object()) {
    // By family ({"interleaved": 5}), so that a sweep of schedules gives each its own chunk
    // count: the config's schedule takes its entry, or its family's default.
    Reader per = top.child("virtual_stages");
    const std::string own(family.name);
    c.virtual_stages = family.default_virtual_stages;
    for (const auto& item : top.at("virtual_stages").items()) {
      const std::string& name = item.key();
      if (!schedule::parse_family(name))
        per.fail(name, "not a schedule family (one of " + family_names() + ")");
      const int v = static_cast<int>(per.integer(name, 1));
      if (name == own) c.virtual_stages = v;
    }
    if (c.virtual_stages < family.min_virtual_stages ||
        (family.max_virtual_stages > 0 && c.virtual_stages > family.max_virtual_stages))
      per.fail(own, schedule::family_rule_violation(c.schedule, c.mesh, c.virtual_stages,
                                                    c.microbatches()));
  } else {
    c.virtual_stages =
        static_cast<int>(top.integer("virtual_stages", family.default_virtual_stages));
    if (c.virtual_stages < family.min_virtual_stages ||
        (family.max_virtual_stages > 0 && c.virtual_stages > family.max_virtual_stages))
      top.fail("virtual_stages", schedule::family_rule_violation(
                                     c.schedule, c.mesh, c.virtual_stages, c.microbatches()) +
                                     (family.max_virtual_stages == 1
                                          ? " (a sweep of schedules gives each its own by family: "
                                            "\"virtual_stages\": {\"interleaved\": " +
                                                std::to_string(c.virtual_stages) + "})"
                                          : ""));
  }
}

// cluster.*: the GPU, its nodes and network. Returns the GPU's catalog entry (never null), which
// the options are checked against.
std::shared_ptr<const cost::Hardware> parse_cluster(Reader cluster, PredictConfig& c,
                                                    HardwareCache* catalog) {
  c.gpu = cluster.string("gpu", c.gpu);
  // The catalog entry is read here once and travels with the configuration (simulate uses it).
  std::shared_ptr<const cost::Hardware> hardware;
  try {
    hardware = catalog ? catalog->get(c.gpu)
                       : std::make_shared<const cost::Hardware>(cost::find_hardware(c.gpu));
  } catch (const std::runtime_error& e) {
    cluster.fail("gpu", e.what());  // an unknown name or a bad file is the config's error
  }
  c.hardware = {c.gpu, hardware};
  c.gpus_per_node = static_cast<int>(cluster.integer("gpus_per_node", 0, 0));
  c.nodes = static_cast<int>(cluster.integer("nodes", 0, 0));
  if (c.nodes > 0) {
    const int64_t per_node = c.gpus_per_node > 0 ? c.gpus_per_node : hardware->devices_per_node;
    if (int64_t{c.nodes} * per_node != c.gpus())
      cluster.fail("nodes", std::to_string(c.nodes) + " nodes of " + std::to_string(per_node) +
                                " GPUs are " + std::to_string(int64_t{c.nodes} * per_node) +
                                " GPUs; the mesh (dp x pp x tp x cp) uses " +
                                std::to_string(c.gpus()));
  }
  c.network_gbps = static_cast<int>(cluster.integer("network_gbps", 0, 0));
  c.nvls = cluster.boolean("nvls", true);
  if (cluster.has("placement")) {
    std::string err;
    const auto order = cost::parse_dim_order(cluster.string("placement", ""), &err);
    if (!order) cluster.fail("placement", err);
    c.placement = *order;
  }
  cluster.check_unknown();
  return hardware;
}

// framework (a top-level key): its profile, which the mesh's parallelisms and the options must
// be among.
cost::Framework parse_framework(Reader& top, Reader& mesh, PredictConfig& c) {
  c.framework = top.string("framework", std::string(cost::kDefaultFramework));
  cost::Framework framework;
  try {
    framework = cost::find_framework(c.framework);  // unknown or malformed: the config's error
  } catch (const std::runtime_error& e) {
    top.fail("framework", e.what());
  }
  // The parallelisms the stack runs (its profile's "lacks").
  const auto lacks = [&](const char* key, int size, bool has, const char* what) {
    if (size > 1 && !has)
      mesh.fail(key, "framework '" + framework.name + "' has no " + what +
                         " (its profile's \"lacks\"): it must be 1");
  };
  lacks("tp", c.mesh.tp, framework.has_tensor_parallel, "tensor parallelism");
  lacks("pp", c.mesh.pp, framework.has_pipeline_parallel, "pipeline parallelism");
  lacks("cp", c.cp, framework.has_context_parallel, "context parallelism");
  return framework;
}

// options.recompute and options.recompute_every.
void parse_recompute(Reader& opt, const cost::Framework& framework, PredictConfig& c) {
  c.recompute = opt.choice("recompute", model::Recompute::kNone, model::kRecomputeNames);
  if (std::find(framework.recompute.begin(), framework.recompute.end(), model::name(c.recompute)) ==
      framework.recompute.end())
    opt.fail("recompute", "framework '" + framework.name + "' has no '" +
                              std::string(model::name(c.recompute)) + "' recomputation");
  c.recompute_every = static_cast<int>(opt.integer("recompute_every", 1));
  if (c.recompute_every > 1 && c.recompute != model::Recompute::kFull)
    opt.fail("recompute_every", "needs options.recompute \"full\" (every n-th layer checkpointed)");
}

// options.sequence_parallel, tp_comm_overlap and tp_comm_overlap_cfg: tensor parallelism's
// communication. `where` names the config in tp_comm_overlap_cfg's errors.
void parse_tensor_parallel_options(Reader& opt, const cost::Framework& framework,
                                   const std::string& where, PredictConfig& c) {
  c.sequence_parallel = opt.boolean("sequence_parallel", false);
  if (c.sequence_parallel && !framework.has_sequence_parallel)
    opt.fail("sequence_parallel", "framework '" + framework.name +
                                      "' has no sequence parallelism (its profile's \"lacks\")");
  c.tp_comm_overlap = opt.boolean("tp_comm_overlap", false);
  if (c.tp_comm_overlap && (!c.sequence_parallel || c.mesh.tp < 2))
    opt.fail("tp_comm_overlap",
             "needs options.sequence_parallel true and mesh.tp > 1 (Megatron-LM: tensor parallel "
             "communication/GEMM overlap only with sequence parallelism)");
  if (opt.has("tp_comm_overlap_cfg")) {
    if (!c.tp_comm_overlap)
      opt.fail("tp_comm_overlap_cfg",
               "needs options.tp_comm_overlap true (the settings of the overlap it turns on)");
    c.tp_comm_overlap_cfg = cost::parse_tp_overlap_cfgs(opt.at("tp_comm_overlap_cfg"), where,
                                                        "options.tp_comm_overlap_cfg");
  }
  if (c.tp_comm_overlap && !c.tp_comm_overlap_cfg && !framework.tp_comm_overlap)
    opt.fail("tp_comm_overlap", "framework '" + framework.name +
                                    "' has no userbuffers overlap (its profile's tp_comm_overlap); "
                                    "give the run's own in options.tp_comm_overlap_cfg");
}

// options.flash_attention: true, false or a kernel class.
void parse_flash_attention(Reader& opt, const cost::Framework& framework,
                           const cost::Hardware& hardware, PredictConfig& c) {
  if (opt.has("flash_attention") && opt.at("flash_attention").is_string()) {
    // A kernel class: fused attention, of that class whatever the profile's.
    const std::string k = opt.string("flash_attention", "");
    const auto kernel = cost::parse_attention_kernel(k);
    if (!kernel ||
        (*kernel != cost::AttentionKernel::kFlash1 && *kernel != cost::AttentionKernel::kFlash2 &&
         *kernel != cost::AttentionKernel::kFlash3))
      opt.fail("flash_attention", "'" + k + "' is not true, false, flash1, flash2 or flash3");
    // Asked for by name, a class the GPU has no rate for is refused (a framework profile's flash3
    // on such a GPU runs as flash2, cost::kernel_class_on, as FlashAttention's own dispatch does).
    if (*kernel == cost::AttentionKernel::kFlash3 && hardware.efficiency.attention_flash3 <= 0)
      opt.fail("flash_attention",
               "gpu '" + c.gpu +
                   "' has no FlashAttention-3 rate (its catalog entry's "
                   "efficiency.attention_flash3; FlashAttention-3 needs Hopper): give flash2");
    c.attention_kernel = *kernel;
  } else if (opt.has("flash_attention") && !opt.at("flash_attention").is_boolean()) {
    opt.fail("flash_attention", "must be true, false, or a kernel class: flash1, flash2 or flash3");
  }
  c.flash_attention = c.attention_kernel.has_value() ||
                      opt.boolean("flash_attention", framework.has_flash_attention);
  if (c.flash_attention && !framework.has_flash_attention)
    opt.fail("flash_attention",
             "framework '" + framework.name + "' has no flash attention (its profile's \"lacks\")");
  // The K/V exchange of context parallelism is part of a fused attention kernel (the model hides
  // it behind that kernel alone); unfused attention with cp had been priced with it wholly exposed.
  if (!c.flash_attention && c.cp > 1)
    opt.fail("flash_attention",
             "must be true with mesh.cp > 1: context parallelism runs inside a fused attention "
             "kernel (Transformer Engine asserts \"Context parallelism is only implemented with "
             "Flash Attention and Fused Attention\")");
}

// options.precision, grad_reduce_dtype, fp8 and fp8_params.
void parse_precision(Reader& opt, const cost::Framework& framework, const cost::Hardware& hardware,
                     PredictConfig& c) {
  c.precision = opt.choice("precision", cost::Precision::kBf16, cost::kPrecisionNames);
  if (opt.has("grad_reduce_dtype")) {
    // The precisions a gradient is reduced in, in cost::Precision's order (tf32 is no dtype).
    static constexpr std::array<std::string_view, 3> kReduceDtypes = {"bf16", "fp16", "fp32"};
    c.grad_reduce_dtype = opt.required_choice<cost::Precision>("grad_reduce_dtype", kReduceDtypes);
  }
  c.fp8 = opt.boolean("fp8", false);
  if (c.fp8) {
    if (!framework.has_fp8)
      opt.fail("fp8", "framework '" + framework.name +
                          "' has no FP8 linears (its profile's \"fp8\": Transformer Engine's)");
    if (hardware.peak_fp8 <= 0)
      opt.fail("fp8", "gpu '" + c.gpu + "' has no FP8 rate (its catalog entry's peak_flops.fp8)");
    if (c.precision != cost::Precision::kBf16 && c.precision != cost::Precision::kFp16)
      opt.fail("fp8", "needs options.precision bf16 or fp16 (the type beside the FP8 GEMMs)");
    if (c.model != ModelKind::kGpt)
      opt.fail("fp8", "needs model.kind gpt (Transformer Engine's linears of a transformer layer)");
    if (c.gpt.experts > 0)
      opt.fail("fp8", "model.experts: the FP8 path of expert GEMMs is not modelled");
  }
  c.fp8_params = opt.boolean("fp8_params", false);
  if (c.fp8_params && !c.fp8) opt.fail("fp8_params", "needs options.fp8 true");
}

// options.zero and options.shard_group: how the data-parallel replicas shard the states.
void parse_sharding(Reader& opt, const cost::Framework& framework, PredictConfig& c) {
  c.zero = static_cast<int>(opt.integer("zero", 0, 0, 3));
  if (const std::string why = zero_refusal(c, framework); !why.empty()) opt.fail("zero", why);
  c.shard_group = static_cast<int>(opt.integer("shard_group", 0, 0));
  if (c.shard_group > 0 && c.zero != 3)
    opt.fail("shard_group", "needs options.zero 3 (hybrid sharding shards parameters)");
  if (c.shard_group > 0 && c.mesh.dp % c.shard_group != 0)
    opt.fail("shard_group", std::to_string(c.shard_group) + " does not divide mesh.dp (" +
                                std::to_string(c.mesh.dp) + ")");
  // An expert's states shard over the shard group's replicas of it (zero_shards / ep): a group
  // holding part of an expert-parallel group would shard them over less than one rank.
  if (c.shard_group > 0 && c.ep > 1 && c.zero_shards() % c.ep != 0)
    opt.fail("shard_group",
             std::to_string(c.shard_group) +
                 (c.cp > 1 ? " (times mesh.cp " + std::to_string(c.cp) + ")" : std::string()) +
                 " is not a multiple of mesh.ep (" + std::to_string(c.ep) +
                 "): an expert's states shard over its replicas in a shard group, shard_group" +
                 (c.cp > 1 ? " x cp" : "") + " / ep of them");
}

// options.*: what the run turns on, each checked against the framework and the GPU.
void parse_options(Reader opt, const cost::Framework& framework, const cost::Hardware& hardware,
                   const std::string& where, PredictConfig& c) {
  parse_recompute(opt, framework, c);
  parse_tensor_parallel_options(opt, framework, where, c);
  parse_flash_attention(opt, framework, hardware, c);
  parse_precision(opt, framework, hardware, c);
  parse_sharding(opt, framework, c);
  c.optimizer = opt.choice("optimizer", Optimizer::kAdam, kOptimizerNames);
  if (opt.has("optimizer_state_bytes")) {
    c.optimizer_state_bytes =
        static_cast<int>(opt.integer("optimizer_state_bytes", 0, 0, 64, " (bytes a parameter)"));
  }
  c.symmetry = opt.choice("symmetry", Symmetry::kAuto, kSymmetryNames);
  opt.check_unknown();
}

// Each object in the order the checks between them need: a check reads only what came before it,
// and check_shapes, which joins them all, comes last.
PredictConfig parse_config_logged(const json& j, const std::string& where, HardwareCache* catalog,
                                  std::set<std::string>* keys) {
  PredictConfig c;
  Reader top(j, where, "", keys);
  top.string("name", "");
  if (!top.has("model"))
    top.fail("model",
             "missing: a config must say what it models, e.g. {\"kind\": \"gpt\", \"layers\": 24, "
             "\"hidden\": 2304, \"heads\": 24, \"seq\": 2048, \"vocab\": 51200}");
  parse_model(top.child("model"), c);
  Reader mesh = top.child("mesh");
  parse_mesh(mesh, c);
  parse_batch(top.child("batch"), c);
  parse_schedule(top, c);
  const std::shared_ptr<const cost::Hardware> hardware =
      parse_cluster(top.child("cluster"), c, catalog);
  const cost::Framework framework = parse_framework(top, mesh, c);
  parse_options(top.child("options"), framework, *hardware, where, c);
  top.check_unknown();
  check_shapes(c, mesh, top);
  return c;
}

}  // namespace

std::string shortened_key(const std::string& dotted) {
  return dotted.size() <= 60 ? dotted : dotted.substr(0, 60) + "...";
}

int PredictConfig::microbatches() const {
  return static_cast<int>(global_batch / (micro_batch * mesh.dp));
}

std::shared_ptr<const cost::Hardware> HardwareCache::get(const std::string& name_or_path) {
  // A name that failed fails again at once: a sweep of 20,000 points over an unknown gpu had
  // searched the catalog folders for it 20,000 times (11 s).
  if (const auto failed = failures_.find(name_or_path); failed != failures_.end())
    throw std::runtime_error(failed->second);
  auto it = entries_.find(name_or_path);
  if (it == entries_.end()) {
    try {
      it = entries_
               .emplace(name_or_path,
                        std::make_shared<const cost::Hardware>(cost::find_hardware(name_or_path)))
               .first;
    } catch (const std::runtime_error& e) {
      failures_.emplace(name_or_path, e.what());
      throw;
    }
  }
  return it->second;
}

PredictConfig parse_config(const json& j, const std::string& where, HardwareCache* catalog) {
  return parse_config_logged(j, where, catalog, nullptr);
}

std::vector<std::string> config_keys() {
  // One valid configuration per model kind, each reading every key of its kind.
  std::set<std::string> keys;
  HardwareCache catalog;
  for (const std::string_view kind : kModelKindNames) {
    json j = {{"model", {{"kind", kind}}}};
    if (kind == "gpt")
      j["model"].update({{"layers", 2},
                         {"hidden", 64},
                         {"heads", 4},
                         {"seq", 16},
                         {"vocab", 64},
                         {"experts", 2}});
    if (kind == "mlp" || kind == "moe") j["model"].update({{"layers", 2}, {"hidden", 8}});
    try {
      parse_config_logged(j, "config_keys", &catalog, &keys);
    } catch (const std::runtime_error&) {
      // A kind whose minimal config fails still logged the keys it read.
    }
  }
  return {keys.begin(), keys.end()};
}

std::string zero_refusal(const PredictConfig& c, const cost::Framework& framework) {
  if (!framework.runs_zero(c.zero)) {
    std::vector<std::string> runs;
    for (int z = 0; z < 4; ++z)
      if (framework.runs_zero(z)) runs.push_back(std::to_string(z));
    std::string stages = runs.front();
    for (size_t i = 1; i < runs.size(); ++i)
      stages += (i + 1 == runs.size() ? " and " : ", ") + runs[i];
    return "framework '" + framework.name + "' runs ZeRO " +
           (runs.size() == 1 ? "stage " : "stages ") + stages +
           " (its profile's \"zero_stages\"), not " + std::to_string(c.zero);
  }
  if (c.zero == 0 && framework.replicate_alone && c.mesh.dp > 1 &&
      (c.mesh.tp > 1 || c.mesh.pp > 1 || c.cp > 1))
    return "framework '" + framework.name +
           "' replicates without sharding (options.zero 0) only when nothing else splits the model "
           "(mesh.tp, mesh.pp and mesh.cp 1; its profile's \"replicate_alone\")";
  if (c.mesh.pp <= 1 || c.zero <= framework.pipelined_zero) return "";
  return "framework '" + framework.name + "' runs ZeRO up to stage " +
         std::to_string(framework.pipelined_zero) + " beside pipeline parallelism (mesh.pp " +
         std::to_string(c.mesh.pp) + "; its profile's \"pipelined_zero\"), not " +
         std::to_string(c.zero);
}

cost::Framework framework_of(const PredictConfig& c) {
  cost::Framework fw = c.profile.entry && c.profile.framework == c.framework
                           ? *c.profile.entry
                           : cost::find_framework(c.framework);
  if (c.attention_kernel) fw.flash = *c.attention_kernel;
  if (c.grad_reduce_dtype)
    fw.grad_reduce_bytes.set(c.precision, cost::element_bytes(*c.grad_reduce_dtype));
  return fw;
}

std::optional<FootprintProblem> footprint_problem(const PredictConfig& c) {
  const traces::MemoryLimit budget = traces::memory_limit();
  const double memory = budget.bytes;
  const bool blocks = c.model == ModelKind::kMlp || c.model == ModelKind::kMoe;
  const double layers = c.model == ModelKind::kGpt
                            ? static_cast<double>(c.gpt.layers) * gpt_layer_bytes()
                        : blocks ? static_cast<double>(c.mlp_layers) * mlp_layer_bytes()
                                 : 0;
  if (layers > memory / 2) {
    return FootprintProblem{
        "model.layers",
        "building " + std::to_string(c.model == ModelKind::kGpt ? c.gpt.layers : c.mlp_layers) +
            " layers would take about " + traces::format_bytes(layers) +
            " of memory, over half of what this process may use (" + budget.source + ")"};
  }
  const double actions = schedule_actions(c.mesh.pp, c.microbatches(), c.virtual_stages);
  const double bytes = actions * bytes_per_action(false);
  if (bytes > memory / 2) {
    return FootprintProblem{
        "batch.global", std::to_string(c.microbatches()) +
                            " microbatches per replica x pp x virtual_stages make about " +
                            std::to_string(static_cast<int64_t>(actions)) +
                            " actions to simulate, about " + traces::format_bytes(bytes) +
                            " of memory, over half of what this process may use (" + budget.source +
                            ")"};
  }
  return std::nullopt;
}

}  // namespace meshscope::predict
