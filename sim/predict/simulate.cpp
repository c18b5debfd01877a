// Configuration -> workload costs -> schedule -> engine -> summary.
#include "sim/predict/simulate.h"

#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/cost/collective_model.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/cost/topology.h"
#include "sim/engine/symmetry.h"
#include "sim/predict/workload_costs.h"
#include "sim/predict/zero.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/validator.h"
#include "traces/analysis.h"

namespace meshscope::predict {
namespace {

cost::Hardware hardware_for(const PredictConfig& c) {
  cost::Hardware hw = cost::find_hardware(c.gpu);
  if (c.gpus_per_node > 0) {
    hw.devices_per_node = c.gpus_per_node;
    hw.nics_per_node = std::min(hw.nics_per_node, c.gpus_per_node);
  }
  return hw;
}

std::string mesh_text(const PredictConfig& c) {
  std::string s = mesh::to_string(c.mesh);
  if (c.cp > 1) s += " cp=" + std::to_string(c.cp);
  if (c.ep > 1) s += " ep=" + std::to_string(c.ep);
  return s;
}

// Bytes read and written per parameter by one optimizer update.
double update_bytes(const PredictConfig& c) { return c.optimizer == Optimizer::kAdam ? 28 : 12; }

// One optimizer update of `params` parameters: a memory-bound pass, or, when a profile calibrated
// the optimizer phase, its fitted rate. The executor's STEP is SGD counted as 2 FLOPs per parameter
// over 12 bytes moved; another optimizer scales by the bytes it moves.
double optimizer_seconds(const PredictConfig& c, double params, const cost::ComputeModel& compute,
                         const cost::Calibration* calibration) {
  if (calibration != nullptr) {
    const cost::PhaseFit& f = calibration->phase(traces::Phase::kOptimizer);
    if (f.flops_per_s > 0) return f.overhead_ns * 1e-9 + 2 * params / f.flops_per_s * update_bytes(c) / 12;
  }
  return compute.stream_seconds(params * update_bytes(c));
}

// What a data-parallel collective leaves exposed when the framework overlaps it with compute: all
// of it beyond the `window` of compute it hides behind, and at least one layer's share, which has
// nothing to hide behind (the first layer's gradients are reduced after the backward has ended; the
// first layer's parameters must be gathered before the forward can start).
// The part that does hide still costs the compute it runs beside: its thread blocks hold
// `sm_share` of the SMs (catalog collective_ctas), so the compute it overlaps runs that much
// slower.
double exposed_seconds(double seconds, double window_s, int layers, double sm_share) {
  const double exposed =
      std::min(seconds, std::max(seconds / std::max(1, layers), seconds - window_s));
  return exposed + sm_share * (seconds - exposed);
}

// The development-set residuals behind a prediction's range: the framework's on this hardware,
// else its widest over any hardware, else the widest of every profile.
std::pair<cost::Residuals, std::string> residuals_for(const cost::Framework& fw,
                                                      const std::string& hw) {
  const auto it = fw.residuals.find(hw);
  if (it != fw.residuals.end()) return {it->second, fw.name + " on " + hw};
  auto widen = [](cost::Residuals& into, const cost::Residuals& r) {
    into.low = into.rows == 0 ? r.low : std::min(into.low, r.low);
    into.high = into.rows == 0 ? r.high : std::max(into.high, r.high);
    into.rows += r.rows;
  };
  cost::Residuals all;
  for (const auto& [name, r] : fw.residuals) widen(all, r);
  if (all.rows > 0) return {all, fw.name + " (all hardware)"};
  for (const std::string& name : cost::list_frameworks()) {
    try {
      for (const auto& [h, r] : cost::find_framework(name).residuals) widen(all, r);
    } catch (const std::runtime_error&) {
      // A malformed profile beside the others gives no residuals; its own use reports it.
    }
  }
  return {all, all.rows > 0 ? std::string("every framework") : std::string("none")};
}

int m_size(const PredictConfig& c) { return c.mesh.dp * c.mesh.pp * c.mesh.tp; }

schedule::Schedule generate_or_explain(const schedule::GeneratorConfig& g) {
  try {
    return schedule::generate(g);
  } catch (const std::invalid_argument& ex) {
    throw std::invalid_argument(std::string("schedule: ") + ex.what());
  }
}

// Every replica's transfers use the tier its representative's do, and its collectives cost the
// same: then the representatives' simulation is the full one (engine/symmetry.h).
template <typename Tier, typename Coll>
bool replicas_cost_alike(const mesh::Mesh& m, const schedule::Schedule& reps, const std::vector<int>& original,
                         const Tier& tier, const Coll& coll) {
  const mesh::MeshShape shape = m.shape();
  for (int st = 0; st + 1 < reps.num_stages; ++st) {
    const int p = reps.stage_owner[st], q = reps.stage_owner[st + 1];
    if (p == q) continue;
    const int want = tier(original[p], original[q]);
    for (int dp = 0; dp < shape.dp; ++dp)
      for (int tp = 0; tp < shape.tp; ++tp)
        if (tier(m.rank_of({dp, p, tp}), m.rank_of({dp, q, tp})) != want) return false;
  }
  for (int p = 0; p < shape.pp; ++p) {
    std::set<std::tuple<int, int, int, int64_t>> seen;  // ZeRO-3 repeats its gathers per microbatch
    for (const schedule::Action& a : reps.ranks[p]) {
      if (!schedule::is_collective(a.kind)) continue;
      if (!seen.emplace(static_cast<int>(a.kind), static_cast<int>(a.group), a.stage, a.bytes).second) continue;
      const int64_t want = coll(original[p], a);
      for (int dp = 0; dp < shape.dp; ++dp)
        for (int tp = 0; tp < shape.tp; ++tp)
          if (coll(m.rank_of({dp, p, tp}), a) != want) return false;
    }
  }
  return true;
}

}  // namespace

Simulation simulate(const PredictConfig& c, const SimulateOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  cost::Hardware hw = hardware_for(c);
  const cost::Framework fw = cost::find_framework(c.framework);
  hw.efficiency.attention = cost::attention_efficiency(hw, fw.flash);
  // Fitted rates replace the catalog's: those of another device would silently mean nothing.
  if (o.calibration != nullptr && !o.calibration->hardware.empty() && o.calibration->hardware != hw.name)
    throw std::invalid_argument("calibration: fitted on '" + o.calibration->hardware +
                                "' (calibrate --hardware), the config runs on '" + hw.name + "'");
  const WorkloadCosts w = workload_costs(c, fw);
  const int num_stages = static_cast<int>(w.stages.size());
  const int e = cost::element_bytes(c.precision);

  schedule::GeneratorConfig g;
  g.family = c.schedule;
  g.mesh = c.mesh;
  g.microbatches = c.microbatches();
  g.virtual_stages = c.virtual_stages;
  std::vector<int64_t> param_bytes(num_stages);
  for (int s = 0; s < num_stages; ++s) {
    g.activation_bytes.push_back(w.stages[s].output_bytes);
    param_bytes[s] = (w.dense_parameters[s] + w.expert_parameters[s]) * e;
    g.gradient_bytes.push_back(param_bytes[s]);
  }
  Simulation out;
  const cost::ComputeModel compute(hw, c.precision, o.calibration);
  const cost::Topology topo(c.mesh, c.cp, hw.devices_per_node, c.placement);
  const CommPricer pricer(hw, topo, c.ep, o.calibration);
  std::vector<engine::StageTiming> timings;
  for (int s = 0; s < num_stages; ++s) {
    const double shards = c.zero >= 1 ? c.mesh.dp : 1;
    const double opt_s = optimizer_seconds(c, (w.dense_parameters[s] + w.expert_parameters[s]) / shards, compute,
                                           o.calibration);
    timings.push_back(stage_timing(w.stages[s], compute, pricer, opt_s));
  }
  // Prices of the full mesh's links and collectives, by global rank.
  auto tier_full = [&topo](int a, int b) { return topo.same_node(a, b) ? 0 : 1; };
  std::map<std::tuple<int, int, int64_t, int, int, int, int>, int64_t> memo;
  auto coll_full = [&](int rank, const schedule::Action& a) -> int64_t {
    const cost::GroupSpan span = topo.span(a.group, rank);
    const auto key = std::make_tuple(static_cast<int>(a.kind), a.stage, a.bytes, span.ranks,
                                     span.nodes, span.ranks_per_node, static_cast<int>(a.group));
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    const auto kind = collective_kind(a.kind);
    // A framework that reduces gradients in fp32 (grad_reduce_bytes 4) moves that many bytes per
    // element in its dp reductions, whatever the compute precision.
    const bool grad_reduction =
        a.group == mesh::GroupKind::kDp &&
        (kind == cost::CollectiveKind::kAllReduce || kind == cost::CollectiveKind::kReduceScatter);
    const double bytes =
        static_cast<double>(a.bytes) *
        (grad_reduction && fw.grad_reduce_bytes > 0 ? fw.grad_reduce_bytes / e : 1.0);
    double seconds;
    const int64_t expert = a.group == mesh::GroupKind::kDp && a.stage < num_stages
                               ? w.expert_parameters[a.stage] : 0;
    if (expert > 0 && c.ep > 1) {
      // Expert gradients reduce over the dp / ep replicas of each expert only.
      const double share = static_cast<double>(expert) / (expert + w.dense_parameters[a.stage]);
      cost::GroupSpan edp{span.ranks / c.ep, std::min(span.nodes, span.ranks / c.ep),
                          std::max(1, span.ranks_per_node / c.ep)};
      seconds = cost::collective_time(hw, kind, bytes * (1 - share), span, o.calibration).seconds +
                cost::collective_time(hw, kind, bytes * share, edp, o.calibration).seconds;
    } else {
      seconds = cost::collective_time(hw, kind, bytes, span, o.calibration).seconds;
    }
    if (a.group == mesh::GroupKind::kDp && a.stage < num_stages) {
      // Gradient reductions hide behind a microbatch's backward, parameter gathers behind the
      // forward before their use, when the framework overlaps them (framework.h).
      const engine::StageTiming& t = timings[a.stage];
      const int layers = w.layers[a.stage];
      const double sm_share =
          static_cast<double>(hw.collective_ctas) / std::max(1, hw.compute_units);
      if (kind == cost::CollectiveKind::kAllGather) {
        if (fw.param_gather == cost::Overlap::kOverlapped)
          seconds = exposed_seconds(seconds, t.forward_ns * 1e-9, layers, sm_share);
      } else if (kind == cost::CollectiveKind::kAllReduce ||
                 kind == cost::CollectiveKind::kReduceScatter) {
        if (fw.grad_reduce == cost::Overlap::kOverlapped)
          seconds = exposed_seconds(seconds, t.backward_ns * 1e-9, layers, sm_share);
      }
    }
    const int64_t v = static_cast<int64_t>(std::llround(seconds * 1e9));
    memo.emplace(key, v);
    return v;
  };
  // A collective keeps its members' network ports busy when its group spans nodes, else their
  // NVLink ports: point-to-point transfers then share them.
  auto tier_of_coll = [&topo](int rank, const schedule::Action& a) {
    return topo.span(a.group, rank).nodes > 1 ? 1 : 0;
  };
  const cost::P2pLink intra = cost::p2p_link(hw, true, o.calibration);
  const cost::P2pLink inter = cost::p2p_link(hw, false, o.calibration);
  engine::EngineInput in;
  in.stages = timings;
  in.links = {engine::LinkSpec{intra.bandwidth_bytes_per_s, static_cast<int64_t>(intra.latency_ns)},
              engine::LinkSpec{inter.bandwidth_bytes_per_s, static_cast<int64_t>(inter.latency_ns)}};
  // The bubble fraction comes from traces::analyze (as `run` reports it), so a Timeline is built
  // whenever it is small enough to be cheap, even when the caller does not want it: a Timeline
  // costs about 100 bytes and 100 ns a span.
  const auto timeline_for = [&o](const schedule::Schedule& s) {
    int64_t actions = 0;
    for (const auto& program : s.ranks) actions += static_cast<int64_t>(program.size());
    return o.build_timeline ||
           (static_cast<int64_t>(s.ranks.size()) <= kTimelineRanksForBubbles && actions <= kTimelineActionsForBubbles);
  };
  // CPU backend: every rank is a thread; beyond the host's cores they share them.
  const bool shared_cores = hw.kind == "cpu" && hw.host_cores > 0 && m_size(c) > hw.host_cores;
  if (shared_cores) in.shared_processors = hw.host_cores;

  // Identical replicas: generate and run only the representatives (dp 0, tp 0 of each pp rank)
  // when every replica's links and collectives cost what the representative's do.
  const mesh::Mesh m(c.mesh);
  bool once = false;
  engine::EngineResult r;
  // Replicas sharing cores slow each other down: they cannot be simulated once.
  if (o.schedule != nullptr) {
    // The engine reports deadlocks and unmatched transfers, but runs work in any order: what the
    // executor would refuse (a B before its F, work missing or repeated) must not get a step time.
    const schedule::ValidationResult valid = schedule::validate(*o.schedule);
    if (!valid.ok()) throw std::invalid_argument("schedule: " + valid.error->message);
    if (!(o.schedule->mesh == c.mesh) || o.schedule->num_stages != num_stages)
      throw std::invalid_argument("schedule: its mesh " + mesh::to_string(o.schedule->mesh) + " and " +
                                  std::to_string(o.schedule->num_stages) + " stages differ from the config's " +
                                  mesh::to_string(c.mesh) + " and " + std::to_string(num_stages));
    out.schedule = *o.schedule;
    in.schedule = &out.schedule;
    in.tier_of = tier_full;
    in.collective_ns = coll_full;
    in.collective_tier = tier_of_coll;
    once = c.symmetry != Symmetry::kOff && c.mesh.dp * c.mesh.tp > 1 && !shared_cores &&
           engine::replicas_symmetric(in);
    in.build_timeline = timeline_for(out.schedule);
    r = once ? engine::simulate_symmetric(in, {o.expand_replicas}) : engine::simulate(in);
  } else if (c.symmetry != Symmetry::kOff && c.mesh.dp * c.mesh.tp > 1 && !shared_cores) {
    schedule::GeneratorConfig rg = g;
    rg.mesh = {std::min(c.mesh.dp, 2), c.mesh.pp, 1};  // dp 2 keeps the dp all-reduces in
    schedule::Schedule slice = generate_or_explain(rg);
    schedule::Schedule reps = slice;
    reps.mesh = {1, c.mesh.pp, 1};
    reps.ranks.resize(c.mesh.pp);
    apply_zero(reps, c.zero, c.mesh.dp, param_bytes);
    std::vector<int> original(c.mesh.pp);
    for (int p = 0; p < c.mesh.pp; ++p) original[p] = m.rank_of({0, p, 0});
    once = replicas_cost_alike(m, reps, original, tier_full, coll_full);
    if (!once && c.symmetry == Symmetry::kOn)
      throw std::invalid_argument("options.symmetry: replicas differ (their nodes split links "
                                  "differently); use \"auto\" or \"off\"");
    if (once) {
      in.build_timeline = timeline_for(reps);
      out.schedule = std::move(reps);
      in.schedule = &out.schedule;
      in.tier_of = [&](int a, int b) { return tier_full(original[a], original[b]); };
      in.collective_ns = [&](int rank, const schedule::Action& a) { return coll_full(original[rank], a); };
      in.collective_tier = [&](int rank, const schedule::Action& a) { return tier_of_coll(original[rank], a); };
      r = engine::simulate_representatives(in, c.mesh, {o.expand_replicas});
    }
  }
  if (!once && o.schedule == nullptr) {
    out.schedule = generate_or_explain(g);
    apply_zero(out.schedule, c.zero, c.mesh.dp, param_bytes);
    in.build_timeline = timeline_for(out.schedule);
    in.schedule = &out.schedule;
    in.tier_of = tier_full;
    in.collective_ns = coll_full;
    in.collective_tier = tier_of_coll;
    r = engine::simulate(in);
  }

  Summary& s = out.summary;
  s.model = w.description;
  s.hardware = hw.name;
  s.framework = fw.name;
  s.schedule = out.schedule.name;
  s.mesh = mesh_text(c);
  s.gpus = c.gpus();
  s.microbatches = c.microbatches();
  s.step_time_s = r.step_time_ns * 1e-9;
  s.samples_per_s = s.step_time_s > 0 ? c.global_batch / s.step_time_s : 0;
  s.tokens_per_s = s.samples_per_s * w.tokens_per_sample;
  const double model_flops = w.model_flops_per_microbatch * c.microbatches() * c.mesh.dp;
  s.tflops_per_gpu = s.step_time_s > 0 ? model_flops / s.step_time_s / s.gpus / 1e12 : 0;
  s.mfu = s.tflops_per_gpu * 1e12 / compute.peak_flops();
  const auto [res, basis] = residuals_for(fw, hw.name);
  s.range_rows = res.rows;
  s.range_basis = basis;
  s.step_time_s_low = s.step_time_s * (1 + res.low);
  s.step_time_s_high = s.step_time_s * (1 + res.high);
  s.tokens_per_s_low = s.tokens_per_s / (1 + res.high);
  s.tokens_per_s_high = s.tokens_per_s / (1 + res.low);
  s.mfu_low = s.mfu / (1 + res.high);
  s.mfu_high = s.mfu / (1 + res.low);
  if (in.build_timeline) {
    s.bubble_fraction = traces::analyze(r.timeline).bubble_fraction;
  } else {
    s.bubble_fraction = r.compute_idle_fraction();
  }
  for (const engine::RankStats& st : r.ranks) s.communication_s = std::max(s.communication_s, st.communication_ns * 1e-9);
  const StateBytesPerParam per_param = state_bytes(c.precision, c.optimizer == Optimizer::kAdam);
  for (int p = 0; p < c.mesh.pp; ++p) {
    int64_t dense = 0, expert = 0;
    for (int st = 0; st < num_stages; ++st)
      if (out.schedule.stage_owner[st] == p) {
        dense += w.dense_parameters[st];
        expert += w.expert_parameters[st];
      }
    const int64_t act = r.ranks[m.rank_of({0, p, 0})].peak_activation_bytes;
    s.memory.push_back(device_memory(dense, expert, c.mesh.dp, c.ep, c.zero, per_param, act));
    s.peak_memory_bytes = std::max(s.peak_memory_bytes, s.memory.back().total());
  }
  s.memory_capacity_bytes = hw.memory_bytes;
  s.fits = s.peak_memory_bytes <= hw.memory_bytes;
  s.replicas_simulated_once = once;
  s.simulated_ranks = once ? c.mesh.pp : m.size();
  s.simulated_actions = r.actions;
  if (o.build_timeline) out.timeline = std::move(r.timeline);
  if (o.build_timeline) {
    out.timeline.metadata["model"] = w.description;
    out.timeline.metadata["hardware"] = hw.name;
    out.timeline.metadata["backend"] = "sim";
  }
  s.simulator_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json mem = nlohmann::json::array();
  for (size_t p = 0; p < s.memory.size(); ++p) {
    const DeviceMemory& d = s.memory[p];
    mem.push_back({{"pp", p},
                   {"parameters_bytes", d.parameters_bytes},
                   {"gradients_bytes", d.gradients_bytes},
                   {"optimizer_bytes", d.optimizer_bytes},
                   {"activations_bytes", d.activations_bytes},
                   {"total_bytes", d.total()}});
  }
  return {{"model", s.model},
          {"hardware", s.hardware},
          {"framework", s.framework},
          {"schedule", s.schedule},
          {"mesh", s.mesh},
          {"gpus", s.gpus},
          {"microbatches", s.microbatches},
          {"step_time_s", s.step_time_s},
          {"step_time_s_low", s.step_time_s_low},
          {"step_time_s_high", s.step_time_s_high},
          {"tokens_per_s", s.tokens_per_s},
          {"tokens_per_s_low", s.tokens_per_s_low},
          {"tokens_per_s_high", s.tokens_per_s_high},
          {"samples_per_s", s.samples_per_s},
          {"tflops_per_gpu", s.tflops_per_gpu},
          {"mfu", s.mfu},
          {"mfu_low", s.mfu_low},
          {"mfu_high", s.mfu_high},
          {"range_rows", s.range_rows},
          {"range_basis", s.range_basis},
          {"bubble_fraction", s.bubble_fraction},
          {"communication_s", s.communication_s},
          {"peak_memory_bytes", s.peak_memory_bytes},
          {"memory_capacity_bytes", s.memory_capacity_bytes},
          {"fits", s.fits},
          {"memory_per_stage", mem},
          {"replicas_simulated_once", s.replicas_simulated_once},
          {"simulated_ranks", s.simulated_ranks},
          {"simulated_actions", s.simulated_actions},
          {"simulator_seconds", s.simulator_seconds}};
}

}  // namespace meshscope::predict
