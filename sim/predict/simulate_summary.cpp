// What a simulated run gave: throughput, MFU and its range from the development set, bubbles,
// memory per stage and the busiest stage's breakdown (simulate_parts.h).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/engine/program.h"
#include "sim/predict/simulate_parts.h"
#include "sim/predict/zero.h"
#include "traces/analysis.h"

namespace meshscope::predict::simulate_parts {
namespace {

std::string mesh_text(const PredictConfig& c) {
  std::string s = mesh::to_string(c.mesh);
  if (c.cp > 1) s += " cp=" + std::to_string(c.cp);
  if (c.ep > 1) s += " ep=" + std::to_string(c.ep);
  return s;
}

// The development-set residuals behind a prediction's range: the framework's on this hardware,
// else its widest over the hardware it has runs on (named: a B200 row's range from H100 runs says
// so), else the widest of every profile; none but for a GPT on GPUs.
std::pair<cost::Residuals, std::string> residuals_for(const cost::Framework& fw,
                                                      const cost::Hardware& hardware,
                                                      ModelKind model) {
  // Every published run is a GPT-style transformer's on GPUs: a CPU's prediction, or one of
  // VGG or of the executor's small models, has no range to borrow.
  if (hardware.kind == "cpu" || model != ModelKind::kGpt) return {cost::Residuals{}, "none"};
  const std::string& hw = hardware.name;
  const auto it = fw.residuals.find(hw);
  if (it != fw.residuals.end()) return {it->second, fw.name + " on " + hw};
  auto widen = [](cost::Residuals& into, const cost::Residuals& r) {
    into.low = into.rows == 0 ? r.low : std::min(into.low, r.low);
    into.high = into.rows == 0 ? r.high : std::max(into.high, r.high);
    into.rows += r.rows;
    into.max_seq = std::max(into.max_seq, r.max_seq);
  };
  cost::Residuals all;
  std::string measured_on;  // the hardware the framework's runs are of: "h100-sxm, h200-sxm"
  for (const auto& [name, r] : fw.residuals) {
    widen(all, r);
    if (r.rows > 0) measured_on += (measured_on.empty() ? "" : ", ") + name;
  }
  if (all.rows > 0) return {all, fw.name + " on " + measured_on};
  for (const std::string& name : cost::list_frameworks()) {
    try {
      for (const auto& [h, r] : cost::find_framework(name).residuals) widen(all, r);
    } catch (const std::runtime_error&) {
      // A malformed profile beside the others gives no residuals; its own use reports it.
    }
  }
  return {all, all.rows > 0 ? std::string("every framework") : std::string("none")};
}

// traces::analyze's overall bubble fraction over the simulated ranks (the representatives when
// they stood for their replicas, as the Timeline's devices then are): sum of idle over sum of
// windows, the window [0, step end], in the same integers.
double busy_bubble_fraction(const Resolved& r, const Run& run) {
  const engine::EngineResult& res = run.result;
  const int64_t window = res.step_time_ns;
  int64_t idle = 0, devices = 0;
  auto add = [&](int rank) {
    idle += window - res.ranks[rank].busy_ns;
    ++devices;
  };
  if (run.once) {
    for (int p = 0; p < r.config.mesh.pp; ++p) add(r.mesh.rank_of({0, p, 0}));
  } else {
    for (int rank = 0; rank < r.mesh.size(); ++rank) add(rank);
  }
  const int64_t all_windows = window * devices;
  return window > 0 && all_windows > 0 ? static_cast<double>(idle) / all_windows : 0.0;
}

// Adds up what `program`'s data-parallel collectives cost on `rank` (Breakdown, CollectivePrice).
// A ZeRO-3 gather hides behind the compute that uses it, the next of its stage (item 55).
void add_dp_collectives(const Resolved& r, FullMeshPrices& prices, int rank,
                        const std::vector<schedule::Action>& program, Breakdown& b) {
  for (size_t i = 0; i < program.size(); ++i) {
    const schedule::Action& a = program[i];
    if (!schedule::is_collective(a.kind) || a.group != mesh::GroupKind::kDp) continue;
    CollectivePrice p = prices.collective_price(rank, a);
    if (p.hide_layers > 0) {
      const auto use = std::find_if(program.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                    program.end(), [&](const schedule::Action& c) {
                                      return schedule::is_compute(c.kind) && c.stage == a.stage;
                                    });
      p.exposed_s = p.wire_s;  // nothing uses it: waited for whole
      if (use != program.end()) {
        const double window =
            1e-9 * static_cast<double>(engine::action_ns(r.timings[use->stage], use->kind));
        p.exposed_s = exposed_seconds(p.wire_s, window, p.hide_layers);
      }
      p.charged_s = p.exposed_s + p.charge_share * (p.wire_s - p.exposed_s);
    }
    b.dp_collectives_wire_s += p.wire_s;
    b.dp_collectives_exposed_s += p.exposed_s;
    b.dp_collectives_charged_s += p.charged_s;
  }
}

}  // namespace

const std::vector<schedule::Action>& program_of(const Resolved& r, const Run& run, int p) {
  return run.schedule.ranks[run.reduced ? p : r.mesh.rank_of({0, p, 0})];
}

void add_memory(const Resolved& r, const Run& run, const ActivationOf& activation_of, Summary& s) {
  const PredictConfig& c = r.config;
  StateBytesPerParam per_param = state_bytes(c.precision, c.optimizer == Optimizer::kAdam);
  if (c.optimizer_state_bytes) per_param.optimizer = *c.optimizer_state_bytes;  // item 47
  if (const double g = r.fw.gradient_bytes.at(c.precision); g > 0) per_param.gradients = g;
  // Kept in the buffer the collective reduces: in its type (docs/ACCURACY.md item 45).
  if (const double g = r.fw.grad_reduce_bytes.at(c.precision);
      r.fw.gradients_in_reduce_dtype && g > 0)
    per_param.gradients = g;
  // Gathered and reduced once a step, a stage's parameters and gradients are whole between
  // microbatches, the gradients accumulated in the reduction's type (docs/ACCURACY.md item 44).
  const bool once = shards_once_a_step(c.zero, c.data_parallel(), c.mesh.pp, r.fw);
  if (once)
    per_param.gradients = std::max(per_param.gradients, r.fw.grad_reduce_bytes.at(c.precision));
  // Gathered each microbatch, FSDP keeps whole on the loss's rank its root unit, some blocks and,
  // when the backward's first gradients are reduced, more (docs/ACCURACY.md items 48 and 49).
  const cost::Framework::HeldUnsharded held = r.fw.held_unsharded;
  const bool holds_unsharded = c.zero >= 3 && !once && r.w.layer_parameters > 0 &&
                               (held.root || held.last_layers > 0 || held.prefetch_layers > 0);
  const int loss_stage = r.num_stages - 1;
  const int loss_rank = run.schedule.stage_owner[loss_stage];
  s.memory.clear();
  s.peak_memory_bytes = 0;
  for (int p = 0; p < c.mesh.pp; ++p) {
    int64_t dense = 0, expert = 0, working = 0, root = 0, layers = 0, rank_layers = 0;
    for (int st = 0; st < r.num_stages; ++st)
      if (run.schedule.stage_owner[st] == p) {
        dense += r.w.dense_parameters[st];
        expert += r.w.expert_parameters[st];
        rank_layers += r.w.layers[st];
        if (holds_unsharded) {
          root += r.w.dense_parameters[st] + r.w.expert_parameters[st] -
                  int64_t{r.w.layers[st]} * r.w.layer_parameters;
          layers += r.w.layers[st];
        }
        working = std::max(working, r.w.stages[st].working_bytes);  // one op at a time
      }
    const int64_t act = activation_of(p);
    s.memory.push_back(
        device_memory(dense, expert, c.zero_shards(), c.ep, once ? 1 : c.zero, per_param, act));
    s.memory.back().working_bytes = working;
    // TE's FP8 linears cache an FP8 copy of each weight and its transpose beside the bf16 weight;
    // with FP8 parameters those two are the weights (docs/ACCURACY.md item 50).
    if (c.fp8 && !c.fp8_params)
      s.memory.back().parameters_bytes += 2 * rank_layers * r.w.layer_linear_weights;
    if (holds_unsharded && p == loss_rank) {
      const model::StageCost& head = r.w.stages[loss_stage];
      add_fsdp_held({.root = held.root,
                     .last_layers = held.last_layers,
                     .prefetch_layers = held.prefetch_layers,
                     .root_parameters = root,
                     .layer_parameters = r.w.layer_parameters,
                     .rank_layers = layers,
                     .loss_stage_layers = r.w.layers[loss_stage],
                     .head_parameters = head.head_parameters,
                     .head_activation_bytes = head.head_activation_bytes,
                     .last_layer_activation_bytes = head.last_layer_activation_bytes,
                     .element_bytes = cost::element_bytes(c.precision),
                     .reduce_bytes = r.fw.grad_reduce_bytes.at(c.precision)},
                    s.memory.back());
    }
    s.peak_memory_bytes = std::max(s.peak_memory_bytes, s.memory.back().total());
  }
  s.memory_capacity_bytes = r.hw.memory_bytes;
  s.fits = s.peak_memory_bytes <= r.hw.memory_bytes;
  s.state_bytes = per_param;
  const int zero = once ? 1 : c.zero;  // as device_memory shards them
  s.parameter_shards = zero >= 3 ? c.zero_shards() : 1;
  s.gradient_shards = zero >= 2 ? c.zero_shards() : 1;
  s.optimizer_shards = zero >= 1 ? c.zero_shards() : 1;
}

Summary summarise(const Resolved& r, FullMeshPrices& prices, const Run& run, bool with_breakdown) {
  const PredictConfig& c = r.config;
  const engine::EngineResult& res = run.result;
  Summary s;
  s.model = r.w.description;
  s.hardware = r.hw.name;
  s.framework = r.fw.name;
  s.schedule = run.schedule.name;
  s.mesh = mesh_text(c);
  s.gpus = c.gpus();
  s.microbatches = c.microbatches();
  s.step_time_s = res.step_time_ns * 1e-9;
  s.samples_per_s = s.step_time_s > 0 ? c.global_batch / s.step_time_s : 0;
  s.tokens_per_s = s.samples_per_s * r.w.tokens_per_sample;
  const double model_flops = r.w.model_flops_per_microbatch * c.microbatches() * c.mesh.dp;
  s.tflops_per_gpu = s.step_time_s > 0 ? model_flops / s.step_time_s / s.gpus / 1e12 : 0;
  s.mfu = s.tflops_per_gpu * 1e12 / r.compute.peak_flops();
  // The development set's residuals are of predictions from the catalog's figures: a calibration
  // replaces them with fitted rates whose error they do not describe, so it gets no range.
  auto [res_range, basis] = residuals_for(r.fw, r.hw, c.model);
  if (r.calibration != nullptr) res_range = {};
  s.range_rows = res_range.rows;
  s.range_basis = r.calibration != nullptr ? "" : basis;
  s.range_max_seq = res_range.max_seq;
  s.range_beyond_seq = res_range.max_seq > 0 && r.w.tokens_per_sample > res_range.max_seq;
  // No development run is FP8 (set 9 is held back).
  s.range_without_fp8 = c.fp8 && r.calibration == nullptr;
  s.sustained_spread = r.hw.efficiency.sustained_spread;
  s.slowest_gpu_share = cost::slowest_gpu_share(r.hw.efficiency, c.gpus());
  s.step_time_s_low = s.step_time_s * (1 + res_range.low);
  s.step_time_s_high = s.step_time_s * (1 + res_range.high);
  s.tokens_per_s_low = s.tokens_per_s / (1 + res_range.high);
  s.tokens_per_s_high = s.tokens_per_s / (1 + res_range.low);
  s.mfu_low = s.mfu / (1 + res_range.high);
  s.mfu_high = s.mfu / (1 + res_range.low);
  s.bubble_fraction = run.skipped    ? 0.0
                      : run.timeline ? traces::analyze(res.timeline).bubble_fraction
                                     : busy_bubble_fraction(r, run);
  for (const engine::RankStats& st : res.ranks)
    s.communication_s = std::max(s.communication_s, st.communication_ns * 1e-9);
  if (run.skipped) {
    add_memory(
        r, run, [&](int p) { return engine::peak_activation(program_of(r, run, p), r.timings); },
        s);
  } else {
    add_memory(
        r, run,
        [&](int p) {
          return res.ranks[r.mesh.rank_of({0, p, 0})].peak_activation_bytes;
        },
        s);
  }
  if (!run.skipped && with_breakdown) {
    int busiest = 0;
    for (int p = 1; p < c.mesh.pp; ++p)
      if (res.ranks[r.mesh.rank_of({0, p, 0})].compute_ns >
          res.ranks[r.mesh.rank_of({0, busiest, 0})].compute_ns)
        busiest = p;
    const int rank = r.mesh.rank_of({0, busiest, 0});
    s.breakdown =
        breakdown(r, busiest, program_of(r, run, busiest), res.ranks[rank], res.step_time_ns);
    add_dp_collectives(r, prices, rank, program_of(r, run, busiest), s.breakdown);
  }
  s.replicas_simulated_once = run.once;
  s.simulated_ranks = run.once ? c.mesh.pp : r.mesh.size();
  s.simulated_actions = res.actions;
  return s;
}

}  // namespace meshscope::predict::simulate_parts
