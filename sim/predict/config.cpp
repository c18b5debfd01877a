// Parsing one prediction config: every key read, checked and named in its errors.
#include "sim/predict/config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "sim/cost/framework.h"
#include "sim/predict/footprint.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

class Reader {
 public:
  // `keys`, when given, collects every dotted key the parser asks for (config_keys).
  Reader(const json& j, std::string where, std::string prefix,
         std::set<std::string>* keys = nullptr)
      : j_(j), where_(std::move(where)), prefix_(std::move(prefix)), keys_(keys) {
    if (!j_.is_object()) fail("", "must be an object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    const std::string path = prefix_.empty() ? key : (key.empty() ? prefix_ : prefix_ + "." + key);
    // The whole file at fault (a number, a list of nothing) is no key: it read "key ''".
    throw std::runtime_error(where_ + (path.empty() ? ": the top level" : ": key '" + path + "'") +
                             ": " + why);
  }
  bool has(const std::string& key) {
    seen_.insert(key);
    if (keys_ != nullptr) keys_->insert(dotted(key));
    return j_.contains(key);
  }
  const json& at(const std::string& key) { return j_.at(key); }

  // Every count fits an int (mesh dimensions, layers, batch sizes are ints downstream).
  // An integer in [lo, hi]; anything else (another type too) fails naming that range and
  // `unit` (" (bytes a parameter)").
  int64_t integer(const std::string& key, int64_t def, int64_t lo = 1,
                  int64_t hi = std::numeric_limits<int32_t>::max(), const std::string& unit = "") {
    if (!has(key)) return def;
    const json& v = at(key);
    const std::string range =
        "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + unit;
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
        fail(key, range);
      return static_cast<int64_t>(d);
    }
    if (!v.is_number_integer()) fail(key, range);
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                               : v.get<int64_t>() > hi)
      fail(key, range);
    const int64_t x = v.get<int64_t>();
    if (x < lo) fail(key, range);
    return x;
  }
  bool boolean(const std::string& key, bool def) {
    if (!has(key)) return def;
    if (!at(key).is_boolean()) fail(key, "must be true or false");
    return at(key).get<bool>();
  }
  std::string string(const std::string& key, const std::string& def) {
    if (!has(key)) return def;
    if (!at(key).is_string()) fail(key, "must be a string");
    return at(key).get<std::string>();
  }
  template <typename Enum, size_t N>
  Enum choice(const std::string& key, Enum def, const std::array<std::string_view, N>& names) {
    if (!has(key)) return def;
    return required_choice<Enum>(key, names);
  }
  // A key the config must give: what it models has no default.
  template <typename Enum, size_t N>
  Enum required_choice(const std::string& key, const std::array<std::string_view, N>& names) {
    if (!has(key)) fail(key, "missing: one of " + list(names));
    const std::string v = string(key, "");
    for (size_t i = 0; i < N; ++i)
      if (names[i] == v) return static_cast<Enum>(i);
    fail(key, "'" + v + "' is not one of " + list(names));
  }
  template <size_t N>
  static std::string list(const std::array<std::string_view, N>& names) {
    std::string all;
    for (auto n : names) all += (all.empty() ? "" : ", ") + std::string(n);
    return all;
  }
  int64_t required_integer(const std::string& key, const std::string& what) {
    if (!has(key)) fail(key, "missing: " + what);
    return integer(key, 0);
  }
  void check_unknown() const {
    for (const auto& [k, v] : j_.items())
      if (!seen_.count(k)) fail(k, "unknown key");
  }
  Reader child(const std::string& key) {
    if (!has(key)) return Reader(empty_, where_, dotted(key), keys_);
    return Reader(at(key), where_, dotted(key), keys_);
  }
  std::string dotted(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }

 private:
  static inline const json empty_ = json::object();
  const json& j_;
  std::string where_;
  std::string prefix_;
  std::set<std::string>* keys_;
  std::set<std::string> seen_;
};

std::string family_names() {
  std::string all;
  for (const auto& info : schedule::kFamilies)
    all += (all.empty() ? "" : ", ") + std::string(info.name);
  return all;
}

constexpr int kMaxMlpHidden = 1 << 16;  // model::make_workload's limits (workload.cpp)
constexpr int kMaxMoeHidden = 1 << 14;
constexpr int kMaxExperts = 1024;

void check_top_k(Reader& m, int64_t top_k, int64_t experts) {
  if (top_k > experts)
    m.fail("top_k", std::to_string(top_k) + " is more than model.experts (" +
                        std::to_string(experts) + "): a token is routed to top_k distinct experts");
}

void parse_model(Reader m, PredictConfig& c) {
  c.model = m.required_choice<ModelKind>("kind", kModelKindNames);
  switch (c.model) {
    case ModelKind::kGpt: {
      // A GPT's shape has no sensible default: a config that leaves it out predicts nothing real.
      model::GptSpec& g = c.gpt;
      g.layers = m.required_integer("layers", "transformer layers of the gpt model");
      g.hidden = m.required_integer("hidden", "the gpt model's hidden size");
      g.heads = m.required_integer("heads", "the gpt model's attention heads");
      g.kv_heads = m.integer("kv_heads", 0, 0);
      g.ffn = m.integer("ffn", 0, 0);
      g.seq = m.required_integer("seq", "the gpt model's sequence length in tokens");
      g.vocab = m.required_integer("vocab", "the gpt model's vocabulary size");
      g.gated_mlp = m.boolean("gated_mlp", g.gated_mlp);
      g.experts = m.integer("experts", 0, 0);
      g.top_k = m.integer("top_k", 1);
      // A dense model's own values written out (top_k 1, expert_ffn 0: the defaults) change
      // nothing; another would be ignored.
      if (m.has("top_k") && g.experts == 0 && g.top_k != 1)
        m.fail("top_k", "needs model.experts > 0");
      if (g.experts > 0) check_top_k(m, g.top_k, g.experts);
      g.expert_ffn = m.integer("expert_ffn", 0, 0);
      if (m.has("expert_ffn") && g.experts == 0 && g.expert_ffn != 0)
        m.fail("expert_ffn", "needs model.experts > 0");
      g.tied_embeddings = m.boolean("tied_embeddings", g.tied_embeddings);
      g.learned_positions = m.boolean("learned_positions", g.learned_positions);
      if (g.hidden % g.heads != 0) m.fail("hidden", "must be divisible by heads");
      if (m.has("layers_per_stage")) {
        const json& l = m.at("layers_per_stage");
        if (!l.is_array()) m.fail("layers_per_stage", "must be a list of integers");
        // An empty list was taken as "not given" (an even split) without a word.
        if (l.empty())
          m.fail("layers_per_stage",
                 "is empty: give one count per stage, or leave it out for an "
                 "even split");
        for (const json& x : l) {
          if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > g.layers)
            m.fail("layers_per_stage", "must be a list of integers from 0 to model.layers");
          c.layers_per_stage.push_back(static_cast<int>(x.get<int64_t>()));
        }
      }
      break;
    }
    case ModelKind::kVgg:
      c.vgg.image = m.integer("image", c.vgg.image, 32);
      c.vgg.classes = m.integer("classes", c.vgg.classes);
      break;
    case ModelKind::kMlp:
    case ModelKind::kMoe: {
      const bool moe = c.model == ModelKind::kMoe;
      const std::string kind = moe ? "the moe model" : "the mlp model";
      c.mlp_layers = static_cast<int>(m.required_integer("layers", "blocks of " + kind));
      c.mlp_hidden = static_cast<int>(m.required_integer("hidden", kind + "'s hidden size"));
      const int max_hidden = moe ? kMaxMoeHidden : kMaxMlpHidden;
      if (c.mlp_hidden > max_hidden)
        m.fail("hidden", "must be at most " + std::to_string(max_hidden) + " for " + kind);
      if (!moe) break;
      c.moe_experts = static_cast<int>(m.integer("experts", c.moe_experts));
      if (c.moe_experts > kMaxExperts)
        m.fail("experts", "must be at most " + std::to_string(kMaxExperts));
      c.moe_top_k = static_cast<int>(m.integer("top_k", c.moe_top_k));
      check_top_k(m, c.moe_top_k, c.moe_experts);
      if (m.has("capacity_factor")) {
        const json& f = m.at("capacity_factor");
        if (!f.is_number() || !(f.get<double>() > 0) || f.get<double>() > c.moe_experts)
          m.fail("capacity_factor", "must be a number in (0, model.experts]");
        c.moe_capacity_factor = f.get<double>();
      }
      break;
    }
    default:
      break;
  }
  m.check_unknown();
}

// What the simulator counts in 64-bit bytes and 32-bit ranks, with room to spare: configurations
// beyond it would overflow silently.
constexpr double kMaxGpus = 1 << 24;     // the engine's event targets (engine/event_queue.h)
constexpr double kMaxStages = 1 << 20;   // schedule text's limit
constexpr double kMaxModelBytes = 1e17;  // parameters, or activations of one microbatch

// Rough upper bounds of a model's parameter and per-microbatch activation bytes (4 bytes a value).
std::pair<double, double> model_bytes(const PredictConfig& c) {
  const double b = static_cast<double>(c.micro_batch);
  if (c.model == ModelKind::kGpt) {
    const model::GptSpec& g = c.gpt;
    const double h = g.hidden, s = g.seq, L = g.layers, V = g.vocab;
    const double f = g.ffn > 0 ? g.ffn : 4 * h, e = std::max<double>(1, g.experts);
    const double ef = g.expert_ffn > 0 ? g.expert_ffn : f;
    const double params = L * (4 * h * h + 3 * h * std::max(f, ef * e)) + 2 * V * h;
    const double acts =
        b * s * (L * (34 * h + 5 * static_cast<double>(g.heads) * s + 3 * f) + 2 * V);
    return {4 * params, 4 * acts};
  }
  if (c.model == ModelKind::kVgg) {
    const double px = static_cast<double>(c.vgg.image) * c.vgg.image;
    return {4 * (1.5e8 + 4096.0 * c.vgg.classes), 4 * b * px * 64 * 20};
  }
  const double h = c.mlp_hidden, L = c.mlp_layers;
  if (c.model == ModelKind::kMoe) {
    const double E = c.moe_experts, kept = c.moe_capacity_factor * c.moe_top_k;
    return {4 * L * E * (8 * h * h + h), 4 * b * L * (2 * E + kept * 16 * h + 2 * h)};
  }
  return {4 * L * 8 * h * h, 4 * b * L * 10 * h};
}

void check_footprint(const PredictConfig& c, Reader& top) {
  if (const std::optional<FootprintProblem> p = footprint_problem(c)) top.fail(p->key, p->reason);
}

// What the model builders would reject, said with the key to change.
void check_shapes(const PredictConfig& c, Reader& mesh, Reader& top) {
  const double gpus = static_cast<double>(c.mesh.dp) * c.mesh.pp * c.mesh.tp * c.cp;
  if (gpus > kMaxGpus)
    mesh.fail("", "dp x pp x tp x cp = " + std::to_string(static_cast<int64_t>(gpus)) +
                      " GPUs; the simulator takes at most " +
                      std::to_string(static_cast<int64_t>(kMaxGpus)));
  if (static_cast<double>(c.mesh.pp) * c.virtual_stages > kMaxStages)
    top.fail("virtual_stages", "pp x virtual_stages is more than " +
                                   std::to_string(static_cast<int64_t>(kMaxStages)) + " stages");
  const auto [param_bytes, act_bytes] = model_bytes(c);
  if (param_bytes > kMaxModelBytes || act_bytes > kMaxModelBytes) {
    char b[160];
    std::snprintf(b, sizeof b,
                  "too large to count: about %.2g bytes of parameters, %.2g of activations "
                  "per microbatch (at most %.0e each)",
                  param_bytes, act_bytes, kMaxModelBytes);
    top.fail("model", b);
  }
  const int tp = c.mesh.tp;
  const int stages = c.mesh.pp * c.virtual_stages;
  auto need = [&](Reader& r, const char* key, bool ok, const std::string& why) {
    if (!ok) r.fail(key, why);
  };
  if (c.model == ModelKind::kGpt) {
    const model::GptSpec& g = c.gpt;
    const int64_t kv = g.kv_heads > 0 ? g.kv_heads : g.heads;
    const int64_t ffn = g.ffn > 0 ? g.ffn : 4 * g.hidden;
    auto div = [&](const char* what, int64_t v) {
      need(mesh, "tp", v % tp == 0,
           "model." + std::string(what) + " (" + std::to_string(v) + ") is not divisible by tp (" +
               std::to_string(tp) + ")");
    };
    if (g.kv_heads > g.heads)
      top.fail("model.kv_heads", std::to_string(g.kv_heads) + " is more than model.heads (" +
                                     std::to_string(g.heads) +
                                     "): each kv head serves a group of query heads");
    if (g.heads % kv != 0)
      top.fail("model.kv_heads", "model.heads (" + std::to_string(g.heads) +
                                     ") is not divisible by kv_heads (" + std::to_string(kv) +
                                     "): each kv head serves heads / kv_heads query heads");
    div("heads", g.heads);
    div("kv_heads", kv);
    div("ffn", ffn);
    div("vocab", g.vocab);
    need(mesh, "cp", g.seq % c.cp == 0,
         "model.seq (" + std::to_string(g.seq) + ") is not divisible by cp");
    // Megatron-core's get_batch_on_this_cp_rank cuts the sequence into 2 x cp chunks and gives
    // rank i chunks i and 2cp-1-i, so that every rank has an equal share of the causal mask's
    // work (the load balance the attention's 1/cp is priced with).
    need(mesh, "cp", c.cp == 1 || g.seq % (2 * c.cp) == 0,
         "model.seq (" + std::to_string(g.seq) + ") is not divisible by 2 x cp (" +
             std::to_string(2 * c.cp) +
             "): context parallelism cuts the sequence into 2 x cp chunks, two to a rank, "
             "for the causal mask's load balance (Megatron-core get_batch_on_this_cp_rank)");
    need(mesh, "ep", g.experts == 0 || g.experts % c.ep == 0,
         "model.experts is not divisible by ep");
    if (g.experts > 0) {
      div("expert_ffn", g.expert_ffn > 0 ? g.expert_ffn : ffn);
      // The experts' all-to-all dispatcher sends each tensor-parallel rank's own share of the
      // tokens, which sequence parallelism gives it (sim/model/transformer.cpp).
      need(top, "options.sequence_parallel", tp == 1 || c.sequence_parallel,
           "must be true for model.experts with mesh.tp > 1 (Megatron-LM asserts it: "
           "\"When using MoE and tensor parallelism, sequence parallelism must be used\", "
           "megatron/training/arguments.py)");
    }
    if (!c.layers_per_stage.empty()) {
      const int64_t listed =
          std::accumulate(c.layers_per_stage.begin(), c.layers_per_stage.end(), int64_t{0});
      need(top, "model.layers_per_stage",
           static_cast<int64_t>(c.layers_per_stage.size()) == stages && listed == g.layers,
           "lists " + std::to_string(c.layers_per_stage.size()) + " stages holding " +
               std::to_string(listed) +
               " layers; it needs pp x virtual_stages = " + std::to_string(stages) +
               " stages holding model.layers (" + std::to_string(g.layers) + ")");
    }
    if (c.layers_per_stage.empty())
      need(mesh, "pp", g.layers >= stages,
           "model.layers (" + std::to_string(g.layers) + ") fewer than pp x virtual_stages (" +
               std::to_string(stages) + ")");
  } else if (c.model == ModelKind::kMlp) {
    need(mesh, "pp", c.mlp_layers >= stages, "model.layers fewer than pp x virtual_stages");
    need(mesh, "tp", (4 * c.mlp_hidden) % tp == 0, "4 x model.hidden is not divisible by tp");
  } else if (c.model == ModelKind::kMoe) {
    need(mesh, "pp", c.mlp_layers >= stages, "model.layers fewer than pp x virtual_stages");
    need(mesh, "tp", tp == 1, "the moe model runs with tp = 1 (experts are sharded over ep)");
    need(mesh, "ep", c.moe_experts % c.ep == 0, "model.experts is not divisible by ep");
  } else if (c.model == ModelKind::kVgg) {
    need(mesh, "tp", tp == 1, "the vgg model runs with tp = 1");
  }
  const int64_t layers = c.model == ModelKind::kGpt ? c.gpt.layers : c.mlp_layers;
  if (c.virtual_stages > 1 && c.layers_per_stage.empty() &&
      (c.model == ModelKind::kGpt || c.model == ModelKind::kMlp || c.model == ModelKind::kMoe))
    need(top, "virtual_stages", layers % stages == 0,
         "model.layers (" + std::to_string(layers) + ") is not divisible by pp x virtual_stages (" +
             std::to_string(stages) +
             "): every chunk gets the same layers, as Megatron's interleaved schedule requires "
             "(model.layers_per_stage splits them unevenly on purpose)");
  const std::string family_rule =
      schedule::family_rule_violation(c.schedule, c.mesh, c.virtual_stages, c.microbatches());
  need(top, "schedule", family_rule.empty(), family_rule);
  check_footprint(c, top);
}

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

  Reader batch = top.child("batch");
  c.micro_batch = batch.integer("micro", 1);
  c.global_batch = batch.integer("global", c.micro_batch * c.mesh.dp);
  if (c.global_batch % (c.micro_batch * c.mesh.dp) != 0)
    batch.fail("global", std::to_string(c.global_batch) +
                             " is not divisible by batch.micro x mesh.dp = " +
                             std::to_string(c.micro_batch * c.mesh.dp));
  batch.check_unknown();

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

  Reader cluster = top.child("cluster");
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

  Reader opt = top.child("options");
  c.recompute = opt.choice("recompute", model::Recompute::kNone, model::kRecomputeNames);
  if (std::find(framework.recompute.begin(), framework.recompute.end(), model::name(c.recompute)) ==
      framework.recompute.end())
    opt.fail("recompute", "framework '" + framework.name + "' has no '" +
                              std::string(model::name(c.recompute)) + "' recomputation");
  c.recompute_every = static_cast<int>(opt.integer("recompute_every", 1));
  if (c.recompute_every > 1 && c.recompute != model::Recompute::kFull)
    opt.fail("recompute_every", "needs options.recompute \"full\" (every n-th layer checkpointed)");
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
    if (*kernel == cost::AttentionKernel::kFlash3 && hardware->efficiency.attention_flash3 <= 0)
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
    if (hardware->peak_fp8 <= 0)
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
  c.optimizer = opt.choice("optimizer", Optimizer::kAdam, kOptimizerNames);
  if (opt.has("optimizer_state_bytes")) {
    c.optimizer_state_bytes =
        static_cast<int>(opt.integer("optimizer_state_bytes", 0, 0, 64, " (bytes a parameter)"));
  }
  c.symmetry = opt.choice("symmetry", Symmetry::kAuto, kSymmetryNames);
  opt.check_unknown();
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
