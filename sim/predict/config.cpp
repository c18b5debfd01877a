// Parsing prediction configs and expanding sweeps.
#include "sim/predict/config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>

#include "sim/cost/framework.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string where, std::string prefix)
      : j_(j), where_(std::move(where)), prefix_(std::move(prefix)) {
    if (!j_.is_object()) fail("", "must be an object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    const std::string path = prefix_.empty() ? key : (key.empty() ? prefix_ : prefix_ + "." + key);
    throw std::runtime_error(where_ + ": key '" + path + "': " + why);
  }
  bool has(const std::string& key) {
    seen_.insert(key);
    return j_.contains(key);
  }
  const json& at(const std::string& key) { return j_.at(key); }

  // Every count fits an int (mesh dimensions, layers, batch sizes are ints downstream).
  int64_t integer(const std::string& key, int64_t def, int64_t lo = 1) {
    if (!has(key)) return def;
    const json& v = at(key);
    constexpr int64_t hi = std::numeric_limits<int32_t>::max();
    const std::string range = "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) fail(key, range);
      return static_cast<int64_t>(d);
    }
    if (!v.is_number_integer()) fail(key, range);
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi) : v.get<int64_t>() > hi)
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
    const std::string v = string(key, "");
    for (size_t i = 0; i < N; ++i)
      if (names[i] == v) return static_cast<Enum>(i);
    std::string all;
    for (auto n : names) all += (all.empty() ? "" : ", ") + std::string(n);
    fail(key, "'" + v + "' is not one of " + all);
  }
  void check_unknown() const {
    for (const auto& [k, v] : j_.items())
      if (!seen_.count(k)) fail(k, "unknown key");
  }
  Reader child(const std::string& key) {
    if (!has(key)) return Reader(empty_, where_, prefix_.empty() ? key : prefix_ + "." + key);
    return Reader(at(key), where_, prefix_.empty() ? key : prefix_ + "." + key);
  }

 private:
  static inline const json empty_ = json::object();
  const json& j_;
  std::string where_;
  std::string prefix_;
  std::set<std::string> seen_;
};

void parse_model(Reader m, PredictConfig& c) {
  c.model = m.choice("kind", ModelKind::kGpt, kModelKindNames);
  switch (c.model) {
    case ModelKind::kGpt: {
      model::GptSpec& g = c.gpt;
      g.layers = m.integer("layers", g.layers);
      g.hidden = m.integer("hidden", g.hidden);
      g.heads = m.integer("heads", g.heads);
      g.kv_heads = m.integer("kv_heads", 0, 0);
      g.ffn = m.integer("ffn", 0, 0);
      g.seq = m.integer("seq", g.seq);
      g.vocab = m.integer("vocab", g.vocab);
      g.gated_mlp = m.boolean("gated_mlp", g.gated_mlp);
      g.experts = m.integer("experts", 0, 0);
      g.top_k = m.integer("top_k", 1);
      g.expert_ffn = m.integer("expert_ffn", 0, 0);
      g.tied_embeddings = m.boolean("tied_embeddings", g.tied_embeddings);
      g.learned_positions = m.boolean("learned_positions", g.learned_positions);
      if (g.hidden % g.heads != 0) m.fail("hidden", "must be divisible by heads");
      if (m.has("layers_per_stage")) {
        const json& l = m.at("layers_per_stage");
        if (!l.is_array()) m.fail("layers_per_stage", "must be a list of integers");
        for (const json& x : l) {
          if (!x.is_number_integer() || x.get<int>() < 0) m.fail("layers_per_stage", "must be a list of integers >= 0");
          c.layers_per_stage.push_back(x.get<int>());
        }
      }
      break;
    }
    case ModelKind::kVgg:
      c.vgg.image = m.integer("image", c.vgg.image, 32);
      c.vgg.classes = m.integer("classes", c.vgg.classes);
      break;
    case ModelKind::kMlp:
      c.mlp_layers = static_cast<int>(m.integer("layers", c.mlp_layers));
      c.mlp_hidden = static_cast<int>(m.integer("hidden", c.mlp_hidden));
      break;
    default:
      break;
  }
  m.check_unknown();
}

// What the simulator counts in 64-bit bytes and 32-bit ranks, with room to spare: configurations
// beyond it would overflow silently.
constexpr double kMaxGpus = 1 << 24;      // the engine's event targets (engine/event_queue.h)
constexpr double kMaxStages = 1 << 20;    // schedule text's limit
constexpr double kMaxModelBytes = 1e17;   // parameters, or activations of one microbatch

// Rough upper bounds of a model's parameter and per-microbatch activation bytes (4 bytes a value).
std::pair<double, double> model_bytes(const PredictConfig& c) {
  const double b = static_cast<double>(c.micro_batch);
  if (c.model == ModelKind::kGpt) {
    const model::GptSpec& g = c.gpt;
    const double h = g.hidden, s = g.seq, L = g.layers, V = g.vocab;
    const double f = g.ffn > 0 ? g.ffn : 4 * h, e = std::max<double>(1, g.experts);
    const double ef = g.expert_ffn > 0 ? g.expert_ffn : f;
    const double params = L * (4 * h * h + 3 * h * std::max(f, ef * e)) + 2 * V * h;
    const double acts = b * s * (L * (34 * h + 5 * static_cast<double>(g.heads) * s + 3 * f) + 2 * V);
    return {4 * params, 4 * acts};
  }
  if (c.model == ModelKind::kVgg) {
    const double px = static_cast<double>(c.vgg.image) * c.vgg.image;
    return {4 * (1.5e8 + 4096.0 * c.vgg.classes), 4 * b * px * 64 * 20};
  }
  const double h = c.mlp_hidden, L = c.mlp_layers;
  return {4 * L * 8 * h * h, 4 * b * L * 10 * h};
}

// What the model builders would reject, said with the key to change.
void check_shapes(const PredictConfig& c, Reader& mesh, Reader& top) {
  const double gpus = static_cast<double>(c.mesh.dp) * c.mesh.pp * c.mesh.tp * c.cp;
  if (gpus > kMaxGpus)
    mesh.fail("", "dp x pp x tp x cp = " + std::to_string(static_cast<int64_t>(gpus)) +
                      " GPUs; the simulator takes at most " + std::to_string(static_cast<int64_t>(kMaxGpus)));
  if (static_cast<double>(c.mesh.pp) * c.virtual_stages > kMaxStages)
    top.fail("virtual_stages", "pp x virtual_stages is more than " +
                                   std::to_string(static_cast<int64_t>(kMaxStages)) + " stages");
  const auto [param_bytes, act_bytes] = model_bytes(c);
  if (param_bytes > kMaxModelBytes || act_bytes > kMaxModelBytes) {
    char b[160];
    std::snprintf(b, sizeof b, "too large to count: about %.2g bytes of parameters, %.2g of activations "
                  "per microbatch (at most %.0e each)", param_bytes, act_bytes, kMaxModelBytes);
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
    div("heads", g.heads);
    div("kv_heads", kv);
    div("ffn", ffn);
    div("vocab", g.vocab);
    need(mesh, "cp", g.seq % c.cp == 0, "model.seq (" + std::to_string(g.seq) + ") is not divisible by cp");
    need(mesh, "ep", g.experts == 0 || g.experts % c.ep == 0, "model.experts is not divisible by ep");
    if (c.layers_per_stage.empty())
      need(mesh, "pp", g.layers >= stages,
           "model.layers (" + std::to_string(g.layers) + ") fewer than pp x virtual_stages (" +
               std::to_string(stages) + ")");
  } else if (c.model == ModelKind::kMlp) {
    need(mesh, "pp", c.mlp_layers >= stages, "model.layers fewer than pp x virtual_stages");
    need(mesh, "tp", (4 * c.mlp_hidden) % tp == 0, "4 x model.hidden is not divisible by tp");
  } else if (c.model == ModelKind::kVgg) {
    need(mesh, "tp", tp == 1, "the vgg model runs with tp = 1");
  }
  if (c.schedule == schedule::Family::kInterleaved)
    need(top, "schedule", c.microbatches() % c.mesh.pp == 0,
         "interleaved needs microbatches per replica (" + std::to_string(c.microbatches()) +
             ") divisible by pp (Megatron's constraint)");
  if (c.schedule == schedule::Family::kTensorParallel || c.schedule == schedule::Family::kDataParallel)
    need(top, "schedule", c.mesh.pp == 1, "the tp and dp families run with pp = 1");
}

}  // namespace

int PredictConfig::microbatches() const {
  return static_cast<int>(global_batch / (micro_batch * mesh.dp));
}

PredictConfig parse_config(const json& j, const std::string& where) {
  PredictConfig c;
  Reader top(j, where, "");
  top.string("name", "");
  parse_model(top.child("model"), c);

  Reader mesh = top.child("mesh");
  c.mesh.dp = static_cast<int>(mesh.integer("dp", 1));
  c.mesh.tp = static_cast<int>(mesh.integer("tp", 1));
  c.mesh.pp = static_cast<int>(mesh.integer("pp", 1));
  c.cp = static_cast<int>(mesh.integer("cp", 1));
  c.ep = static_cast<int>(mesh.integer("ep", 1));
  if (c.mesh.dp % c.ep != 0) mesh.fail("ep", "must divide mesh.dp (experts are sharded inside the dp group)");
  if (c.ep > 1 && c.gpt.experts == 0) mesh.fail("ep", "needs model.experts > 0");
  if (c.cp > 1 && c.model != ModelKind::kGpt) mesh.fail("cp", "context parallelism needs a gpt model");
  mesh.check_unknown();

  Reader batch = top.child("batch");
  c.micro_batch = batch.integer("micro", 1);
  c.global_batch = batch.integer("global", c.micro_batch * c.mesh.dp);
  if (c.global_batch % (c.micro_batch * c.mesh.dp) != 0)
    batch.fail("global", std::to_string(c.global_batch) + " is not divisible by batch.micro x mesh.dp = " +
                             std::to_string(c.micro_batch * c.mesh.dp));
  batch.check_unknown();

  if (top.has("schedule")) {
    const std::string s = top.string("schedule", "1f1b");
    const auto f = schedule::parse_family(s);
    if (!f) {
      std::string all;
      for (const auto& info : schedule::kFamilies) all += (all.empty() ? "" : ", ") + std::string(info.name);
      top.fail("schedule", "'" + s + "' is not one of " + all);
    }
    c.schedule = *f;
  }
  c.virtual_stages = static_cast<int>(top.integer("virtual_stages", 1));
  if (c.virtual_stages > 1 && c.schedule != schedule::Family::kInterleaved)
    top.fail("virtual_stages", "only the interleaved schedule takes more than 1");
  if (c.schedule == schedule::Family::kInterleaved && c.virtual_stages < 2)
    top.fail("virtual_stages", "the interleaved schedule needs 2 or more");

  Reader cluster = top.child("cluster");
  c.gpu = cluster.string("gpu", c.gpu);
  try {
    (void)cost::find_hardware(c.gpu);  // an unknown name or a bad file is the config's error
  } catch (const std::runtime_error& e) {
    cluster.fail("gpu", e.what());
  }
  c.gpus_per_node = static_cast<int>(cluster.integer("gpus_per_node", 0, 0));
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

  Reader opt = top.child("options");
  c.recompute = opt.choice("recompute", model::Recompute::kNone, model::kRecomputeNames);
  if (std::find(framework.recompute.begin(), framework.recompute.end(), model::name(c.recompute)) ==
      framework.recompute.end())
    opt.fail("recompute", "framework '" + framework.name + "' has no '" +
                              std::string(model::name(c.recompute)) + "' recomputation");
  c.sequence_parallel = opt.boolean("sequence_parallel", false);
  c.flash_attention = opt.boolean("flash_attention", true);
  c.precision = opt.choice("precision", cost::Precision::kBf16, cost::kPrecisionNames);
  c.zero = static_cast<int>(opt.integer("zero", 0, 0));
  if (c.zero > 3) opt.fail("zero", "must be 0, 1, 2 or 3");
  c.optimizer = opt.choice("optimizer", Optimizer::kAdam, kOptimizerNames);
  c.symmetry = opt.choice("symmetry", Symmetry::kAuto, kSymmetryNames);
  opt.check_unknown();
  top.check_unknown();
  check_shapes(c, mesh, top);
  return c;
}

std::vector<SweepPoint> expand_sweep(const json& j, const std::string& where) {
  // Paths (JSON pointers) of every list that stands for a value; layers_per_stage is a list by
  // nature, so only a list of lists sweeps it.
  std::vector<std::pair<json::json_pointer, std::string>> lists;
  std::function<void(const json&, const json::json_pointer&, const std::string&)> walk =
      [&](const json& v, const json::json_pointer& ptr, const std::string& dotted) {
        if (v.is_object()) {
          for (const auto& [k, x] : v.items()) walk(x, ptr / k, dotted.empty() ? k : dotted + "." + k);
        } else if (v.is_array()) {
          const bool natural_list = dotted == "model.layers_per_stage";
          if (!natural_list || (!v.empty() && v.front().is_array())) {
            if (v.empty()) throw std::runtime_error(where + ": key '" + dotted + "': an empty list sweeps nothing");
            lists.emplace_back(ptr, dotted);
          }
        }
      };
  walk(j, json::json_pointer(), "");
  double count = 1;
  for (const auto& [ptr, dotted] : lists) count *= static_cast<double>(j.at(ptr).size());
  if (count > static_cast<double>(kMaxSweepPoints))
    throw std::runtime_error(where + ": the lists sweep " + std::to_string(static_cast<int64_t>(count)) +
                             " combinations; at most " + std::to_string(kMaxSweepPoints));
  std::vector<SweepPoint> points;
  size_t invalid = 0;
  std::vector<size_t> idx(lists.size(), 0);
  for (;;) {
    SweepPoint p;
    p.json = j;
    for (size_t i = 0; i < lists.size(); ++i) {
      const json& value = j.at(lists[i].first).at(idx[i]);
      p.json[lists[i].first] = value;
      p.swept.emplace_back(lists[i].second, value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (lists.empty()) {
      p.config = parse_config(p.json, where);
      points.push_back(std::move(p));
      return points;
    }
    try {
      p.config = parse_config(p.json, where);
    } catch (const std::runtime_error& e) {
      p.error = e.what();
      if (p.error.rfind(where + ": ", 0) == 0) p.error.erase(0, where.size() + 2);
      ++invalid;
    }
    points.push_back(std::move(p));
    size_t k = lists.size();
    while (k > 0) {
      --k;
      if (++idx[k] < j.at(lists[k].first).size()) break;
      idx[k] = 0;
      if (k == 0) {
        if (invalid == points.size()) throw std::runtime_error(where + ": " + points.front().error);
        return points;
      }
    }
  }
}

json load_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(path + ": is a directory, not a JSON file");
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": malformed JSON at byte " + std::to_string(e.byte));
  }
}

}  // namespace meshscope::predict
