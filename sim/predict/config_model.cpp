// Reading a config's model (model.*) and checking its shape against the mesh, the batch, the
// schedule and the options: what the model builders would reject, or the simulator could not
// count, refused with the key to change.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>

#include "sim/predict/config_parts.h"

namespace meshscope::predict::config_parts {
namespace {

constexpr int kMaxMlpHidden = 1 << 16;  // model::make_workload's limits (workload.cpp)
constexpr int kMaxMoeHidden = 1 << 14;
constexpr int kMaxExperts = 1024;

void check_top_k(Reader& m, int64_t top_k, int64_t experts) {
  if (top_k > experts)
    m.fail("top_k", std::to_string(top_k) + " is more than model.experts (" +
                        std::to_string(experts) + "): a token is routed to top_k distinct experts");
}

// model.* of a gpt.
void parse_gpt(Reader& m, PredictConfig& c) {
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
  if (m.has("top_k") && g.experts == 0 && g.top_k != 1) m.fail("top_k", "needs model.experts > 0");
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
}

// model.* of the mlp and the moe model (a chain of blocks; the moe's blocks are experts).
void parse_mlp_or_moe(Reader& m, PredictConfig& c) {
  const bool moe = c.model == ModelKind::kMoe;
  const std::string kind = moe ? "the moe model" : "the mlp model";
  c.mlp_layers = static_cast<int>(m.required_integer("layers", "blocks of " + kind));
  c.mlp_hidden = static_cast<int>(m.required_integer("hidden", kind + "'s hidden size"));
  const int max_hidden = moe ? kMaxMoeHidden : kMaxMlpHidden;
  if (c.mlp_hidden > max_hidden)
    m.fail("hidden", "must be at most " + std::to_string(max_hidden) + " for " + kind);
  if (!moe) return;
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

// A rule the model builders hold: when it does not, `why` is the error, under `key` of `r`.
void need(Reader& r, const char* key, bool ok, const std::string& why) {
  if (!ok) r.fail(key, why);
}

// A gpt's heads, ffn, vocab, sequence and experts split over tp, cp and ep, and its layers over
// the stages.
void check_gpt_shapes(const PredictConfig& c, Reader& mesh, Reader& top) {
  const int tp = c.mesh.tp;
  const int stages = c.mesh.pp * c.virtual_stages;
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
  need(mesh, "ep", g.experts == 0 || g.experts % c.ep == 0, "model.experts is not divisible by ep");
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
}

}  // namespace

void parse_model(Reader m, PredictConfig& c) {
  c.model = m.required_choice<ModelKind>("kind", kModelKindNames);
  switch (c.model) {
    case ModelKind::kGpt:
      parse_gpt(m, c);
      break;
    case ModelKind::kVgg:
      c.vgg.image = m.integer("image", c.vgg.image, 32);
      c.vgg.classes = m.integer("classes", c.vgg.classes);
      break;
    case ModelKind::kMlp:
    case ModelKind::kMoe:
      parse_mlp_or_moe(m, c);
      break;
    default:
      break;
  }
  m.check_unknown();
}

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
  if (c.model == ModelKind::kGpt) {
    check_gpt_shapes(c, mesh, top);
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

}  // namespace meshscope::predict::config_parts
