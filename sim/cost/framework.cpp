// Reading framework profiles (sim/cost/frameworks/*.json).
#include "sim/cost/framework.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <span>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/cost/compute_model.h"
#include "sim/cost/hardware.h"
#include "sim/model/stage_cost.h"
#include "traces/enum_names.h"
#include "traces/json_file.h"

namespace meshscope::cost {
namespace {

// The top-level keys a profile may hold (framework_keys()).
const std::vector<std::string_view> kProfileKeys = {"name",
                                                    "description",
                                                    "sources",
                                                    "flash_attention",
                                                    "softmax",
                                                    "elementwise_passes",
                                                    "elementwise_backward_passes",
                                                    "grad_reduce",
                                                    "param_gather",
                                                    "recompute",
                                                    "recompute_early_stop",
                                                    "residuals",
                                                    "grad_reduce_bytes",
                                                    "gradient_bytes",
                                                    "sharded_copies",
                                                    "weight_casts",
                                                    "grad_accumulation",
                                                    "loss_bytes",
                                                    "loss_saved_bytes",
                                                    "loss_peak_bytes",
                                                    "attention_forward_speedup",
                                                    "optimizer_step_bytes",
                                                    "p2p_scatter_gather",
                                                    "p2p_blocking",
                                                    "p2p_recv_posted_ahead",
                                                    "tp_backward_overlap",
                                                    "qkv_split_grad",
                                                    "selective_recomputes_flash",
                                                    "hidden_dropout",
                                                    "attention_dropout",
                                                    "tp_saves_gathered_input",
                                                    "gqa_expand",
                                                    "tp_comm_overlap",
                                                    "lacks",
                                                    "zero_stages",
                                                    "schedules",
                                                    "fp8",
                                                    "replicate_alone",
                                                    "pipelined_zero",
                                                    "pipelined_sharding",
                                                    "held_unsharded"};

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& why) {
  throw std::runtime_error(where + ": key '" + key + "': " + why);
}

template <typename Enum, size_t N>
Enum enum_of(const json& j, const std::string& key, const std::array<std::string_view, N>& names,
             const std::string& where, Enum def) {
  if (!j.contains(key)) return def;
  const json& v = j.at(key);
  std::string all;
  for (std::string_view n : names) all += (all.empty() ? "" : ", ") + std::string(n);
  if (!v.is_string()) fail(where, key, "must be one of " + all);
  const auto it = std::find(names.begin(), names.end(), v.get<std::string>());
  if (it == names.end())
    fail(where, key, "must be one of " + all + ", not '" + v.get<std::string>() + "'");
  return static_cast<Enum>(it - names.begin());
}

double passes_of(const json& j, const std::string& key, const std::string& where, double def,
                 const std::string& prefix = "elementwise_passes.") {
  if (!j.contains(key)) return def;
  const json& v = j.at(key);
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 100)
    fail(where, prefix + key, "must be a number in [0, 100]");
  return v.get<double>();
}

// A true/false `key`, left at `value` when absent.
void boolean_of(const json& j, const std::string& key, const std::string& where, bool& value) {
  if (!j.contains(key)) return;
  if (!j.at(key).is_boolean()) fail(where, key, "must be true or false");
  value = j.at(key).get<bool>();
}

// A number `key` in [lo, hi], left at `value` when absent; `what` ends the message that refuses
// another ("must be " + what).
void number_in(const json& j, const std::string& key, double lo, double hi, const std::string& what,
               const std::string& where, double& value) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
    fail(where, key, "must be " + what);
  value = v.get<double>();
}

// An object `key` of two byte counts per `unit` (a parameter, a logit), `first` and `second`, each
// in [0, 64]; either left at its default when absent ("sharded_copies": {"gather", "reduce"},
// "weight_casts": {"forward", "backward"}, "loss_bytes": {"forward", "backward"}).
void byte_pair(const json& j, const std::string& key, const std::string& first,
               const std::string& second, const std::string& unit, const std::string& where,
               double& first_bytes, double& second_bytes) {
  if (!j.contains(key)) return;
  const json& c = j.at(key);
  if (!c.is_object())
    fail(where, key, "must be {\"" + first + "\": bytes, \"" + second + "\": bytes}");
  traces::require_known_keys(c, {first, second}, where, key + ".");
  for (const auto& [k, v] : c.items()) {
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 64)
      fail(where, key + "." + k, "must be a number of bytes per " + unit + " in [0, 64]");
  }
  first_bytes = c.value(first, first_bytes);
  second_bytes = c.value(second, second_bytes);
}

// An object `key` of figures by precision ({"bf16", "fp16", "fp32"}, any of them), each
// satisfying `valid` or refused with `want`; a precision not given keeps its value.
template <typename Valid>
void per_precision(const json& v, const std::string& key, const std::string& where,
                   const Valid& valid, const std::string& want, ByPrecision& out) {
  traces::require_known_keys(v, {"bf16", "fp16", "fp32"}, where, key + ".");
  for (const auto& [k, n] : v.items())
    if (!valid(n)) fail(where, key + "." + k, want);
  out.bf16 = v.value("bf16", out.bf16);
  out.fp16 = v.value("fp16", out.fp16);
  out.fp32 = v.value("fp32", out.fp32);
}

// A figure `key` that is a number for every precision or an object of figures by precision, each
// satisfying `valid` or refused as not `one` ("2 (bf16/fp16) or 4 (fp32)"); left as it is when
// absent.
template <typename Valid>
void number_or_per_precision(const json& j, const std::string& key, const std::string& where,
                             const Valid& valid, const std::string& one, ByPrecision& out) {
  if (!j.contains(key)) return;
  const json& v = j.at(key);
  if (v.is_object()) {
    per_precision(v, key, where, valid, "must be " + one, out);
    return;
  }
  if (!valid(v))
    fail(where, key, "must be " + one + ", or {\"bf16\", \"fp16\", \"fp32\"} of those");
  out.all = v.get<double>();
}

// Whether `n` is a number of bytes in [lo, hi].
auto bytes_in(double lo, double hi) {
  return [lo, hi](const json& n) {
    return n.is_number() && n.get<double>() >= lo && n.get<double>() <= hi;
  };
}

}  // namespace

model::TpOverlapCfgs parse_tp_overlap_cfgs(const json& j, const std::string& where,
                                           const std::string& key) {
  const std::vector<std::string_view> gemms(model::kTpOverlapGemms.begin(),
                                            model::kTpOverlapGemms.end());
  if (!j.is_object()) fail(where, key, "must map each GEMM (qkv_fprop, ...) to its settings");
  traces::require_known_keys(j, gemms, where, key + ".");
  model::TpOverlapCfgs out;
  for (size_t i = 0; i < gemms.size(); ++i) {
    const std::string name(gemms[i]);
    const std::string at = key + "." + name;
    if (!j.contains(name)) fail(where, at, "missing (every GEMM needs its settings)");
    const json& g = j.at(name);
    if (!g.is_object()) fail(where, at, "must be {\"method\", \"num_sm\", \"num_splits\"}");
    // Transformer Engine's other ub_cfg settings, named so that a cfg copied from TE or NeMo is
    // told what to drop rather than that the key is unknown.
    for (const char* te : {"cga_size", "set_sm_margin", "aggregate", "fp8_buf", "atomic_gemm"})
      if (g.contains(te))
        fail(where, at + "." + te,
             "Transformer Engine's setting, which the model does not price (it reads method, "
             "num_sm and num_splits): leave it out");
    traces::require_known_keys(g, {"method", "num_sm", "num_splits"}, where, at + ".");
    model::TpOverlapCfg& c = out[i];
    const auto method = g.contains("method") && g.at("method").is_string()
                            ? traces::parse_enum<model::TpOverlapCfg::Method>(
                                  model::kTpOverlapMethodNames, g.at("method").get<std::string>())
                            : std::nullopt;
    if (!method) fail(where, at + ".method", "must be ring_exchange, pipeline or bulk");
    c.method = *method;
    const bool ring = c.method == model::TpOverlapCfg::Method::kRingExchange;
    const bool pipeline = c.method == model::TpOverlapCfg::Method::kPipeline;
    if (!g.contains("num_sm") && !ring) fail(where, at + ".num_sm", "missing");
    if (g.contains("num_sm")) {
      const json& v = g.at("num_sm");
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1024)
        fail(where, at + ".num_sm", "must be a whole number of SMs in [1, 1024]");
      c.num_sm = v.get<int>();
    }
    if (pipeline != g.contains("num_splits"))
      fail(where, at + ".num_splits",
           pipeline ? "missing (a pipeline's chunks)" : "only a pipeline has chunks");
    if (pipeline) {
      const json& v = g.at("num_splits");
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 64)
        fail(where, at + ".num_splits", "must be a whole number of chunks in [1, 64]");
      c.num_splits = v.get<int>();
    }
  }
  return out;
}

std::vector<std::string> framework_keys() { return {kProfileKeys.begin(), kProfileKeys.end()}; }

std::optional<AttentionKernel> parse_attention_kernel(std::string_view s) {
  return traces::parse_enum<AttentionKernel>(kAttentionKernelNames, s);
}

Framework parse_framework(const json& j, const std::string& where) {
  if (!j.is_object())
    throw std::runtime_error(where + ": a framework profile must be a JSON object");
  traces::require_known_keys(j, kProfileKeys, where, "");
  Framework f;
  if (!j.contains("name") || !j.at("name").is_string() || j.at("name").get<std::string>().empty())
    fail(where, "name", "missing (a non-empty string)");
  f.name = j.at("name").get<std::string>();
  if (j.contains("description") && !j.at("description").is_string())
    fail(where, "description", "must be a string");
  f.description = j.value("description", "");
  if (j.contains("sources")) {
    if (!j.at("sources").is_array()) fail(where, "sources", "must be a list of strings");
    for (const json& s : j.at("sources")) {
      if (!s.is_string()) fail(where, "sources", "must be a list of strings");
      f.sources.push_back(s.get<std::string>());
    }
  }
  f.flash = enum_of(j, "flash_attention", kAttentionKernelNames, where, AttentionKernel::kFlash2);
  if (f.flash != AttentionKernel::kFlash1 && f.flash != AttentionKernel::kFlash2 &&
      f.flash != AttentionKernel::kFlash3)
    fail(where, "flash_attention", "must be flash1, flash2 or flash3");
  f.softmax = enum_of(j, "softmax", kAttentionKernelNames, where, AttentionKernel::kFusedSoftmax);
  if (f.softmax != AttentionKernel::kUnfused && f.softmax != AttentionKernel::kFusedSoftmax)
    fail(where, "softmax", "must be unfused or fused-softmax");
  if (j.contains("elementwise_passes")) {
    const json& p = j.at("elementwise_passes");
    traces::require_known_keys(p, {"norm", "activation", "residual", "rope", "softmax"}, where,
                               "elementwise_passes.");
    f.passes.norm = passes_of(p, "norm", where, f.passes.norm);
    f.passes.activation = passes_of(p, "activation", where, f.passes.activation);
    f.passes.residual = passes_of(p, "residual", where, f.passes.residual);
    f.passes.rope = passes_of(p, "rope", where, f.passes.rope);
    f.passes.softmax = passes_of(p, "softmax", where, f.passes.softmax);
  }
  if (j.contains("elementwise_backward_passes")) {
    const json& p = j.at("elementwise_backward_passes");
    const std::string prefix = "elementwise_backward_passes.";
    traces::require_known_keys(p, {"norm", "activation", "residual", "rope", "softmax"}, where,
                               prefix);
    f.passes.norm_grad = passes_of(p, "norm", where, f.passes.norm_grad, prefix);
    f.passes.activation_grad = passes_of(p, "activation", where, f.passes.activation_grad, prefix);
    f.passes.residual_grad = passes_of(p, "residual", where, f.passes.residual_grad, prefix);
    f.passes.rope_grad = passes_of(p, "rope", where, f.passes.rope_grad, prefix);
    f.passes.softmax_grad = passes_of(p, "softmax", where, f.passes.softmax_grad, prefix);
  }
  f.grad_reduce = enum_of(j, "grad_reduce", kOverlapNames, where, Overlap::kExposed);
  f.param_gather = enum_of(j, "param_gather", kOverlapNames, where, Overlap::kExposed);
  number_or_per_precision(
      j, "grad_reduce_bytes", where,
      [](const json& n) { return n.is_number() && (n.get<double>() == 2 || n.get<double>() == 4); },
      "2 (bf16/fp16) or 4 (fp32)", f.grad_reduce_bytes);
  if (j.contains("gradient_bytes") && j.at("gradient_bytes").is_string()) {
    if (j.at("gradient_bytes") != "reduced")
      fail(where, "gradient_bytes",
           "must be \"reduced\" (kept in the type they are reduced in), a number of bytes per "
           "parameter in [1, 32], or {\"bf16\", \"fp16\", \"fp32\"} of those");
    f.gradients_in_reduce_dtype = true;
  } else {
    number_or_per_precision(j, "gradient_bytes", where, bytes_in(1, 32),
                            "a number of bytes per parameter in [1, 32]", f.gradient_bytes);
  }
  byte_pair(j, "sharded_copies", "gather", "reduce", "parameter", where, f.gather_copy_bytes,
            f.reduce_copy_bytes);
  byte_pair(j, "weight_casts", "forward", "backward", "parameter", where, f.cast_forward_bytes,
            f.cast_backward_bytes);
  if (j.contains("grad_accumulation")) {
    const json& g = j.at("grad_accumulation");
    if (!g.is_object())
      fail(where, "grad_accumulation",
           "must be {\"bf16\": bytes, \"fp16\": bytes, \"fp32\": bytes} per parameter");
    per_precision(
        g, "grad_accumulation", where,
        [](const json& n) {
          return n.is_number() && n.get<double>() >= 0 && n.get<double>() <= 64;
        },
        "must be a number of bytes per parameter in [0, 64]", f.grad_accumulation);
  }
  byte_pair(j, "loss_bytes", "forward", "backward", "logit", where, f.loss_forward_bytes,
            f.loss_backward_bytes);
  number_in(j, "loss_saved_bytes", 0, 16, "a number of bytes per logit in [0, 16]", where,
            f.loss_saved_bytes);
  number_in(j, "loss_peak_bytes", 0, 64, "a number of bytes per logit in [0, 64]", where,
            f.loss_peak_bytes);
  if (j.contains("loss_peak_bytes") && f.loss_peak_bytes < f.loss_saved_bytes) {
    std::ostringstream saved;
    saved << f.loss_saved_bytes;
    fail(where, "loss_peak_bytes",
         "must be at least loss_saved_bytes (" + saved.str() +
             "): the peak holds what the loss saves");
  }
  number_in(j, "attention_forward_speedup", 0.25, 4,
            "a number in [0.25, 4]: the forward's fraction of peak over the backward's", where,
            f.attention_forward_speedup);
  number_or_per_precision(j, "optimizer_step_bytes", where, bytes_in(12, 256),
                          "a number of bytes per parameter in [12, 256]", f.optimizer_step_bytes);
  boolean_of(j, "p2p_scatter_gather", where, f.p2p_scatter_gather);
  boolean_of(j, "p2p_blocking", where, f.p2p_blocking);
  boolean_of(j, "p2p_recv_posted_ahead", where, f.p2p_recv_posted_ahead);
  boolean_of(j, "tp_backward_overlap", where, f.tp_backward_overlap);
  boolean_of(j, "qkv_split_grad", where, f.qkv_split_grad);
  boolean_of(j, "selective_recomputes_flash", where, f.selective_recomputes_flash);
  boolean_of(j, "hidden_dropout", where, f.hidden_dropout);
  boolean_of(j, "attention_dropout", where, f.attention_dropout);
  boolean_of(j, "tp_saves_gathered_input", where, f.tp_saves_gathered_input);
  boolean_of(j, "gqa_expand", where, f.gqa_expand);
  boolean_of(j, "replicate_alone", where, f.replicate_alone);
  if (j.contains("tp_comm_overlap"))
    f.tp_comm_overlap = parse_tp_overlap_cfgs(j.at("tp_comm_overlap"), where, "tp_comm_overlap");
  if (j.contains("lacks")) {
    const char* want =
        "must be a list of sequence_parallel, flash_attention, tensor_parallel, "
        "pipeline_parallel, context_parallel";
    if (!j.at("lacks").is_array()) fail(where, "lacks", want);
    for (const json& l : j.at("lacks")) {
      if (l == "sequence_parallel")
        f.has_sequence_parallel = false;
      else if (l == "flash_attention")
        f.has_flash_attention = false;
      else if (l == "tensor_parallel")
        f.has_tensor_parallel = false;
      else if (l == "pipeline_parallel")
        f.has_pipeline_parallel = false;
      else if (l == "context_parallel")
        f.has_context_parallel = false;
      else
        fail(where, "lacks", want);
    }
  }
  if (j.contains("schedules")) {
    const json& s = j.at("schedules");
    const char* want = "must be a non-empty list of schedule family names (meshscope schedules)";
    if (!s.is_array() || s.empty()) fail(where, "schedules", want);
    for (const json& name : s) {
      if (!name.is_string() || name.get<std::string>().empty() ||
          name.get<std::string>().size() > 32)
        fail(where, "schedules", want);
      f.schedules.push_back(name.get<std::string>());
    }
  }
  if (j.contains("fp8")) {
    if (j.at("fp8") != "transformer-engine")
      fail(where, "fp8",
           "must be \"transformer-engine\": the FP8 linears the model prices (docs/ACCURACY.md "
           "item 50)");
    f.has_fp8 = true;
  }
  if (j.contains("zero_stages")) {
    const json& z = j.at("zero_stages");
    const char* want =
        "must be a non-empty list of distinct stages 0, 1, 2, 3: the options.zero "
        "the stack runs";
    if (!z.is_array() || z.empty()) fail(where, "zero_stages", want);
    f.zero_stages = {false, false, false, false};
    for (const json& s : z) {
      if (!s.is_number_integer() || s.get<int64_t>() < 0 || s.get<int64_t>() > 3)
        fail(where, "zero_stages", want);
      bool& runs = f.zero_stages[static_cast<size_t>(s.get<int64_t>())];
      if (runs) fail(where, "zero_stages", want);
      runs = true;
    }
  }
  if (j.contains("pipelined_zero")) {
    const json& z = j.at("pipelined_zero");
    if (!z.is_number_integer() || z.get<int64_t>() < 0 || z.get<int64_t>() > 3)
      fail(where, "pipelined_zero",
           "must be 0, 1, 2 or 3: the highest options.zero the stack runs with mesh.pp > 1");
    f.pipelined_zero = z.get<int>();
  }
  if (j.contains("pipelined_sharding")) {
    const json& v = j.at("pipelined_sharding");
    if (v != "per-step" && v != "per-microbatch")
      fail(where, "pipelined_sharding",
           "must be \"per-step\" or \"per-microbatch\": when ZeRO-3 gathers and reduces a stage's "
           "states beside pipeline parallelism");
    f.pipelined_sharding_per_step = v == "per-step";
  }
  if (j.contains("held_unsharded")) {
    const json& v = j.at("held_unsharded");
    const char* want =
        "must be {\"root\": true or false, \"last_layers\": an integer in [0, 1000], "
        "\"prefetch_layers\" (optional): an integer in [0, 1000]}: what FSDP keeps whole while "
        "the loss runs and gathers ahead in the backward";
    const auto count = [&](const char* key) {
      return v.contains(key) && v.at(key).is_number_integer() && v.at(key).get<int64_t>() >= 0 &&
             v.at(key).get<int64_t>() <= 1000;
    };
    const size_t keys = 2 + (v.is_object() && v.contains("prefetch_layers") ? 1 : 0);
    if (!v.is_object() || v.size() != keys || !v.contains("root") || !v.at("root").is_boolean() ||
        !count("last_layers") || (keys == 3 && !count("prefetch_layers")))
      fail(where, "held_unsharded", want);
    f.held_unsharded.root = v.at("root").get<bool>();
    f.held_unsharded.last_layers = v.at("last_layers").get<int>();
    if (keys == 3) f.held_unsharded.prefetch_layers = v.at("prefetch_layers").get<int>();
  }
  boolean_of(j, "recompute_early_stop", where, f.recompute_early_stop);
  if (j.contains("recompute")) {
    const char* want = "must be a list of none, selective, full, op-selective";
    if (!j.at("recompute").is_array()) fail(where, "recompute", want);
    for (const json& r : j.at("recompute")) {
      if (!r.is_string() || !model::parse_recompute(r.get<std::string>()))
        fail(where, "recompute", want);
      f.recompute.push_back(r.get<std::string>());
    }
  } else {
    f.recompute = {"none", "selective", "full"};
  }
  if (j.contains("residuals")) {
    const json& r = j.at("residuals");
    if (!r.is_object())
      fail(where, "residuals", "must map hardware names to {low, high, rows, max_seq}");
    for (const auto& [hw, v] : r.items()) {
      const std::string key = "residuals." + hw;
      const bool with_seq = v.is_object() && v.contains("max_seq");
      if (!v.is_object() || v.size() != (with_seq ? 4u : 3u) || !v.contains("low") ||
          !v.contains("high") || !v.contains("rows") || !v.at("low").is_number() ||
          !v.at("high").is_number() || !v.at("rows").is_number_integer() ||
          (with_seq && !v.at("max_seq").is_number_integer()))
        fail(where, key,
             "must be {\"low\": number, \"high\": number, \"rows\": integer, \"max_seq\": "
             "integer (optional)} and nothing else");
      const double rows = v.at("rows").get<double>();
      if (rows < 1 || rows > 1e6) fail(where, key + ".rows", "must be in [1, 1000000]");
      Residuals res{v.at("low").get<double>(), v.at("high").get<double>(), static_cast<int>(rows)};
      if (with_seq) {
        const double seq = v.at("max_seq").get<double>();
        if (seq < 1 || seq > 1e9) fail(where, key + ".max_seq", "must be in [1, 1000000000]");
        res.max_seq = static_cast<int64_t>(seq);
      }
      if (!(res.low <= res.high) || res.low <= -1) fail(where, key, "needs -1 < low <= high");
      f.residuals[hw] = res;
    }
  }
  return f;
}

Framework load_framework_file(const std::string& path) {
  return parse_framework(traces::load_json_file(path, "framework profile"), path);
}

std::vector<std::string> framework_dirs() {
  std::vector<std::string> dirs;
  for (std::string d : catalog_dirs()) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    dirs.push_back((std::filesystem::path(d).parent_path() / "frameworks").string());
  }
  return dirs;
}

Framework find_framework(const std::string& name_or_path) {
  // Every simulate() of a search or sweep asks for its profile: parse each file once per process
  // (profiles are data beside the program, not edited while it runs). Thread-safe: the GUI
  // simulates on background threads.
  static std::mutex mutex;
  static std::map<std::string, Framework> cache;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(name_or_path);
    if (it != cache.end()) return it->second;
  }
  const std::string path =
      name_or_path.ends_with(".json")
          ? name_or_path
          : find_json_in(name_or_path, framework_dirs(), "framework",
                         "profiles live in sim/cost/frameworks; or give a path ending in .json");
  Framework f = load_framework_file(path);
  if (!name_or_path.ends_with(".json")) require_catalog_name(f.name, name_or_path, path);
  const std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(name_or_path, f);
  return f;
}

double attention_efficiency(const Hardware& hw, AttentionKernel k) {
  const Efficiency& e = hw.efficiency;
  const double fa2 = e.attention_flash2 > 0 ? e.attention_flash2 : e.attention;
  if (kernel_class_on(hw, k) == AttentionKernel::kFlash3) return e.attention_flash3;
  // FlashAttention (v1, and the Triton port of it that MPT's attn_impl 'triton' runs): Dao 2023
  // (FlashAttention-2, arXiv 2307.08691), abstract: FA2 gives "around 2x speedup compared to
  // FlashAttention" (25-40% of A100 peak against FA2's 50-73%). Half FA2's rate; that the same
  // ratio holds on Hopper is an assumption (the paper measures A100).
  constexpr double kFlash1OverFlash2 = 0.5;
  if (k == AttentionKernel::kFlash1) return kFlash1OverFlash2 * fa2;
  return fa2;
}

AttentionRates attention_rates(const Hardware& hw, AttentionKernel k, double forward_speedup) {
  const double combined = attention_efficiency(hw, k);
  // 1 / f + R / b = (1 + R) / c with f = s * b: f = c (1 + R s) / (1 + R).
  constexpr double R = model::kAttentionBackwardFlopRatio;
  const double forward = combined * (1 + R * forward_speedup) / (1 + R);
  return {forward, forward / forward_speedup};
}

int64_t kernel_head_dim(AttentionKernel k, int64_t d) {
  static constexpr int64_t kFlash2[] = {32, 64, 96, 128, 160, 192, 256};
  static constexpr int64_t kFlash3[] = {64, 96, 128, 192, 256};
  std::span<const int64_t> compiled;
  switch (k) {
    case AttentionKernel::kFlash1: {
      if (d > 128) return d;
      int64_t p = 16;
      while (p < d) p *= 2;
      return p;
    }
    case AttentionKernel::kFlash2:
      compiled = kFlash2;
      break;
    case AttentionKernel::kFlash3:
      compiled = kFlash3;
      break;
    default:
      return d;
  }
  for (int64_t c : compiled)
    if (d <= c) return c;
  return d;
}

std::vector<std::string> list_frameworks() { return list_json_in(framework_dirs()); }

}  // namespace meshscope::cost
