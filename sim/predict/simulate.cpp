// Configuration -> workload costs -> schedule -> engine -> summary.
#include "sim/predict/simulate.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/engine/program.h"
#include "sim/engine/symmetry.h"
#include "sim/predict/footprint.h"
#include "sim/predict/resolved.h"
#include "sim/predict/run_workload.h"
#include "sim/predict/workload_costs.h"
#include "sim/predict/zero.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/placement.h"
#include "sim/schedule/posted_receives.h"
#include "sim/schedule/validator.h"
#include "traces/analysis.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"

namespace meshscope::predict {
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

schedule::Schedule generate_or_explain(const schedule::GeneratorConfig& g) {
  try {
    return schedule::generate(g);
  } catch (const std::invalid_argument& ex) {
    std::string why = std::string("schedule: ") + ex.what();
    // The generator's bound on the actions of the ranks it writes out: the config's keys that
    // set them (microbatches per replica, the ranks simulated), named as every key is.
    const int64_t ranks = int64_t{g.mesh.dp} * g.mesh.pp * g.mesh.tp;
    const bool every_rank = g.lowered_ranks == 0;  // else one replica's representatives
    if (schedule::max_generated_actions(g) > schedule::kMaxGeneratedActions)
      why =
          "key 'batch.global': " + std::string(ex.what()) + " (" + std::to_string(g.microbatches) +
          " microbatches per replica" +
          (every_rank ? " on " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks")
                      : std::string(", one replica simulated")) +
          "): fewer microbatches (batch.global over batch.micro x mesh.dp)" +
          (every_rank && g.mesh.dp > 1 ? ", or identical replicas simulated once (options.symmetry)"
                                       : "");
    throw std::invalid_argument(why);
  }
}

// ---- 2. the engine's input: stage times, link tiers, shared processors --------------------------

// CPU backend: every rank is a thread; beyond the host's cores they share them.
bool shares_cores(const Resolved& r) {
  const PredictConfig& c = r.config;
  return r.hw.kind == "cpu" && r.hw.host_cores > 0 &&
         c.mesh.dp * c.mesh.pp * c.mesh.tp > r.hw.host_cores;
}

engine::EngineInput engine_input(const Resolved& r) {
  const cost::P2pLink intra = cost::p2p_link(r.hw, true, r.calibration);
  const cost::P2pLink inter = cost::p2p_link(r.hw, false, r.calibration);
  engine::EngineInput in;
  in.stages = r.timings;
  in.links = {
      engine::LinkSpec{intra.bandwidth_bytes_per_s, static_cast<int64_t>(intra.latency_ns)},
      engine::LinkSpec{inter.bandwidth_bytes_per_s, static_cast<int64_t>(inter.latency_ns)}};
  if (shares_cores(r)) in.shared_processors = r.hw.host_cores;
  in.blocking_sends = r.fw.p2p_blocking;
  in.blocking_reductions = r.fw.grad_reduce == cost::Overlap::kExposed;
  // Receives posted ahead hold NCCL's thread blocks until their data arrives; priced across the
  // network only (cost::kNcclP2pNetThreadBlocks; docs/ACCURACY.md item 33).
  const double net_share = cost::p2p_net_sm_share(r.hw);
  if (r.fw.p2p_recv_posted_ahead && in.shared_processors == 0 && net_share > 0) {
    in.recvs_posted_ahead = true;
    in.p2p_sm_share_by_tier = {0.0, net_share};
  }
  return in;
}

// The bubble fraction is traces::analyze's (as `run` reports it): from the Timeline when the
// caller wants one, else from the same busy time computed from the ops' times without building
// the Timeline (its span names alone cost a string each). At every size: a bubble that counted
// communication as idle beyond some size (as it did up to 2026-12-07) jumped with the mesh, 38%
// against 33% for the same step of a 70B model on 16,384 GPUs with every rank simulated. Recording
// costs 16 bytes an op: 543 -> 684 MB and 1.2 -> 1.3-1.6 s for a 98,304-GPU mesh with every rank
// simulated (`predict`, /usr/bin/time, 2026-12-07, this VM).
void record_for(const SimulateOptions& o, engine::EngineInput& in) {
  in.build_timeline = o.build_timeline;
  in.record_busy = !o.build_timeline;
}

// ---- 3. replication: the representatives once, or every rank ------------------------------------

// Every replica's transfers use the tier its representative's do, and its collectives cost the
// same: then the representatives' simulation is the full one (engine/symmetry.h). A collective
// is checked once per distinct group of its kind (one member stands for its group: they share
// its span), so the check is linear in the ranks.
bool replicas_cost_alike(const Resolved& r, FullMeshPrices& prices, const schedule::Schedule& reps,
                         const std::vector<int>& original) {
  const mesh::Mesh& m = r.mesh;
  const mesh::MeshShape shape = m.shape();
  for (int st = 0; st + 1 < reps.num_stages; ++st) {
    const int p = reps.stage_owner[st], q = reps.stage_owner[st + 1];
    if (p == q) continue;
    const int want = prices.tier(original[p], original[q]);
    for (int dp = 0; dp < shape.dp; ++dp)
      for (int tp = 0; tp < shape.tp; ++tp)
        if (prices.tier(m.rank_of({dp, p, tp}), m.rank_of({dp, q, tp})) != want) return false;
  }
  std::vector<int> leaders;
  for (int p = 0; p < shape.pp; ++p) {
    std::set<std::tuple<int, int, int, int64_t>> seen;  // ZeRO-3 repeats its gathers per microbatch
    for (const schedule::Action& a : reps.ranks[p]) {
      if (!schedule::is_collective(a.kind)) continue;
      if (!seen.emplace(static_cast<int>(a.kind), static_cast<int>(a.group), a.stage, a.bytes)
               .second)
        continue;
      const int64_t want = prices.collective_ns(original[p], a);
      leaders.clear();
      for (int dp = 0; dp < shape.dp; ++dp)
        for (int tp = 0; tp < shape.tp; ++tp) {
          const int rank = m.rank_of({dp, p, tp});
          if (prices.group_leader(a.group, rank) == rank) leaders.push_back(rank);
        }
      const double share = prices.collective_sm_share(original[p], a);
      const engine::CollectiveOverlap early = prices.collective_overlap(original[p], a);
      for (int rank : leaders) {
        const engine::CollectiveOverlap e = prices.collective_overlap(rank, a);
        if (prices.collective_ns(rank, a) != want || prices.collective_sm_share(rank, a) != share ||
            e.lead_ns != early.lead_ns || e.tail_ns != early.tail_ns ||
            e.charge_share != early.charge_share || e.release_ns != early.release_ns ||
            e.hide_layers != early.hide_layers)
          return false;
      }
    }
  }
  return true;
}

// What simulating every rank holds in memory, refused beyond half of this machine's.
// `writing`: for a schedule written out (SimulateOptions::full_schedule), not simulated.
void check_full_footprint(const Resolved& r, bool timeline, bool writing = false) {
  const PredictConfig& c = r.config;
  const double actions =
      schedule_actions(static_cast<double>(r.mesh.size()), c.microbatches(), c.virtual_stages);
  const double bytes = actions * bytes_per_action(timeline);
  const traces::MemoryLimit budget = traces::memory_limit();
  if (bytes > budget.bytes / 2)
    throw std::invalid_argument(
        "key 'mesh': " +
        std::string(writing ? "writing the programs of every one of its "
                            : "simulating every one of its ") +
        std::to_string(r.mesh.size()) + " ranks means about " +
        std::to_string(static_cast<int64_t>(actions)) + " actions, " + traces::format_bytes(bytes) +
        " of memory, over half of what this process may use (" + budget.source + ")" +
        (writing                        ? " (the schedule written out holds every rank)"
         : c.symmetry == Symmetry::kOff ? " (options.symmetry is \"off\")"
                                        : " (its replicas differ)"));
}

struct Run {
  engine::EngineResult result;
  schedule::Schedule schedule;
  bool once = false;     // the representatives stood for their replicas
  bool reduced = false;  // `schedule` holds only the representatives (pp rank p is rank p)
  bool timeline = false;
  bool skipped = false;  // the engine did not run: the configuration cannot fit memory
};

// The program of pp coordinate p's (dp 0, tp 0) rank in the run's schedule.
const std::vector<schedule::Action>& program_of(const Resolved& r, const Run& run, int p) {
  return run.schedule.ranks[run.reduced ? p : r.mesh.rank_of({0, p, 0})];
}

// Memory per pp coordinate (replicas are alike) and the peak over them, given each coordinate's
// peak activation.
template <typename ActivationOf>
void add_memory(const Resolved& r, const Run& run, ActivationOf activation_of, Summary& s) {
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

// The activations each rank holds follow its program order (engine::peak_activation): whether the
// run fits memory is known before the engine runs. With engine_only_if_fits, a run that does not
// fit is marked skipped.
bool skip_engine(const Resolved& r, const SimulateOptions& o, Run& run) {
  if (!o.engine_only_if_fits) return false;
  Summary s;
  add_memory(
      r, run, [&](int p) { return engine::peak_activation(program_of(r, run, p), r.timings); }, s);
  run.skipped = !s.fits;
  return run.skipped;
}

// The engine asks `prices` for the tier of each link and the time and tier of each collective, by
// the ranks of the schedule it runs.
void price_links_and_collectives(engine::EngineInput& in, FullMeshPrices& prices) {
  in.tier_of = [&prices](int a, int b) { return prices.tier(a, b); };
  in.collective_ns = [&prices](int rank, const schedule::Action& a) {
    return prices.collective_ns(rank, a);
  };
  in.collective_tier = [&prices](int rank, const schedule::Action& a) {
    return prices.collective_tier(rank, a);
  };
  if (in.shared_processors == 0)
    in.collective_sm_share = [&prices](int rank, const schedule::Action& a) {
      return prices.collective_sm_share(rank, a);
    };
  in.collective_overlap = [&prices](int rank, const schedule::Action& a) {
    return prices.collective_overlap(rank, a);
  };
}

// Every rank's programs, ZeRO's collectives in them.
schedule::Schedule full_schedule(const Resolved& r) {
  const PredictConfig& c = r.config;
  schedule::Schedule s = generate_or_explain(r.generator);
  apply_zero(s, c.zero, c.data_parallel(), r.param_bytes, r.grad_bytes, c.shard_group,
             shards_once_a_step(c.zero, c.data_parallel(), c.mesh.pp, r.fw), c.cp);
  return s;
}

// A given schedule: validated, then run once over the representatives when it is symmetric.
Run run_given(const Resolved& r, FullMeshPrices& prices, engine::EngineInput in,
              const SimulateOptions& o) {
  const PredictConfig& c = r.config;
  // The engine reports deadlocks and unmatched transfers, but runs work in any order: what the
  // executor would refuse (a B before its F, work missing or repeated) must not get a step time.
  const schedule::ValidationResult valid = schedule::validate(*o.schedule);
  if (!valid.ok()) throw std::invalid_argument("schedule: " + valid.error->message);
  if (!(o.schedule->mesh == c.mesh) || o.schedule->num_stages != r.num_stages)
    throw std::invalid_argument("schedule: its mesh " + mesh::to_string(o.schedule->mesh) +
                                " and " + std::to_string(o.schedule->num_stages) +
                                " stages differ from the config's " + mesh::to_string(c.mesh) +
                                " and " + std::to_string(r.num_stages));
  // Throughput and MFU count the config's batch: a schedule of other microbatches would be
  // timed as one batch and credited with another.
  if (o.schedule->num_microbatches != c.microbatches())
    throw std::invalid_argument("schedule: its " + std::to_string(o.schedule->num_microbatches) +
                                " microbatches a replica differ from the config's " +
                                std::to_string(c.microbatches()) +
                                " (batch.global / (batch.micro x mesh.dp))");
  Run run;
  // torch's schedule runs as torch's runtime runs it: each receive waited for at its use.
  run.schedule = schedule::posts_receives_ahead(*o.schedule)
                     ? schedule::receives_where_needed(*o.schedule)
                     : *o.schedule;
  // The config's model sets what moves, as in a generated schedule (schedule/lowering.cpp): each
  // transfer the output of the lower of its two stages, each dp gradient all-reduce its stage's
  // gradients. A file's bytes are not the config's (`schedules --dump` writes the forward's
  // without a model, and none for the backward's).
  for (std::vector<schedule::Action>& program : run.schedule.ranks) {
    for (schedule::Action& a : program) {
      const bool transfer = a.kind == schedule::ActionKind::kSendForward ||
                            a.kind == schedule::ActionKind::kRecvForward ||
                            a.kind == schedule::ActionKind::kSendBackward ||
                            a.kind == schedule::ActionKind::kRecvBackward;
      if (transfer) {
        const int lower = std::min(a.stage, schedule::p2p_peer_stage(a));
        if (lower >= 0 && static_cast<size_t>(lower) < r.generator.activation_bytes.size())
          a.bytes = r.generator.activation_bytes[static_cast<size_t>(lower)];
      } else if (a.kind == schedule::ActionKind::kAllReduce && a.group == mesh::GroupKind::kDp &&
                 a.stage >= 0 && static_cast<size_t>(a.stage) < r.grad_bytes.size()) {
        a.bytes = r.grad_bytes[static_cast<size_t>(a.stage)];
      }
    }
  }
  in.schedule = &run.schedule;
  price_links_and_collectives(in, prices);
  run.once = c.symmetry != Symmetry::kOff && c.mesh.dp * c.mesh.tp > 1 && !shares_cores(r) &&
             engine::replicas_symmetric(in);
  record_for(o, in);
  run.timeline = in.build_timeline;
  if (skip_engine(r, o, run)) return run;
  run.result =
      run.once ? engine::simulate_symmetric(in, {o.expand_replicas}) : engine::simulate(in);
  return run;
}

// Generated: the representatives (dp 0, tp 0 of each pp rank) alone when every replica's links
// and collectives cost what the representative's do; else every rank.
Run run_generated(const Resolved& r, FullMeshPrices& prices, engine::EngineInput in,
                  const SimulateOptions& o) {
  const PredictConfig& c = r.config;
  Run run;
  // Replicas sharing cores slow each other down: they cannot be simulated once.
  if (c.symmetry != Symmetry::kOff && c.mesh.dp * c.mesh.tp > 1 && !shares_cores(r)) {
    schedule::GeneratorConfig rg = r.generator;
    rg.mesh = {std::min(c.mesh.dp, 2), c.mesh.pp, 1};  // dp 2 keeps the dp all-reduces in
    rg.lowered_ranks = c.mesh.pp;                      // dp 0: the representatives
    schedule::Schedule reps = generate_or_explain(rg);
    reps.mesh = {1, c.mesh.pp, 1};
    reps.ranks.resize(c.mesh.pp);
    apply_zero(reps, c.zero, c.data_parallel(), r.param_bytes, r.grad_bytes, c.shard_group,
               shards_once_a_step(c.zero, c.data_parallel(), c.mesh.pp, r.fw), c.cp);
    std::vector<int> original(c.mesh.pp);
    for (int p = 0; p < c.mesh.pp; ++p) original[p] = r.mesh.rank_of({0, p, 0});
    run.once = replicas_cost_alike(r, prices, reps, original);
    if (!run.once && c.symmetry == Symmetry::kOn)
      throw std::invalid_argument(
          "options.symmetry: replicas differ (their nodes split links "
          "differently); use \"auto\" or \"off\"");
    if (run.once) {
      record_for(o, in);
      run.timeline = in.build_timeline;
      run.schedule = std::move(reps);
      run.reduced = true;
      if (skip_engine(r, o, run)) return run;
      in.schedule = &run.schedule;
      in.tier_of = [&](int a, int b) { return prices.tier(original[a], original[b]); };
      in.collective_ns = [&](int rank, const schedule::Action& a) {
        return prices.collective_ns(original[rank], a);
      };
      in.collective_tier = [&](int rank, const schedule::Action& a) {
        return prices.collective_tier(original[rank], a);
      };
      in.collective_sm_share = [&](int rank, const schedule::Action& a) {
        return prices.collective_sm_share(original[rank], a);
      };
      in.collective_overlap = [&](int rank, const schedule::Action& a) {
        return prices.collective_overlap(original[rank], a);
      };
      run.result = engine::simulate_representatives(in, c.mesh, {o.expand_replicas});
      return run;
    }
  }
  check_full_footprint(r, o.build_timeline);
  run.schedule = full_schedule(r);
  record_for(o, in);
  run.timeline = in.build_timeline;
  if (skip_engine(r, o, run)) return run;
  in.schedule = &run.schedule;
  price_links_and_collectives(in, prices);
  run.result = engine::simulate(in);
  return run;
}

// ---- 4. summarise: throughput, MFU, bubbles, memory ---------------------------------------------

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

}  // namespace

Simulation simulate(const PredictConfig& c, const SimulateOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const Resolved r(c, o.calibration);
  FullMeshPrices prices(r);
  engine::EngineInput in = engine_input(r);
  Run run = o.schedule != nullptr ? run_given(r, prices, std::move(in), o)
                                  : run_generated(r, prices, std::move(in), o);
  Simulation out;
  out.summary = summarise(r, prices, run, o.breakdown);
  if (o.full_schedule && run.reduced) {
    check_full_footprint(r, false, true);
    out.schedule = full_schedule(r);
  } else {
    out.schedule = std::move(run.schedule);
  }
  if (o.build_timeline) {
    out.timeline = std::move(run.result.timeline);
    out.timeline.run.workload = workload_descriptor(c);
    out.timeline.run.hardware = r.hw.name;
    out.timeline.run.backend = "sim";
    out.timeline.metadata["model"] = r.w.description;
    out.timeline.metadata["hardware"] = r.hw.name;
    out.timeline.metadata["backend"] = "sim";
  }
  out.summary.simulator_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
                   {"working_bytes", d.working_bytes},
                   {"unsharded_bytes", d.unsharded_bytes},
                   {"total_bytes", d.total()}});
    // Where FSDP's whole copies are counted, the moment the device's peak is taken at.
    if (d.unsharded_bytes > 0)
      mem.back()["peak_at"] = d.peak_at_first_reduce ? "first_gradient_reduce" : "loss";
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
          {"range_max_seq", s.range_max_seq},
          {"range_beyond_seq", s.range_beyond_seq},
          {"range_without_fp8", s.range_without_fp8},
          {"slowest_gpu_share", s.slowest_gpu_share},
          {"bubble_fraction", s.bubble_fraction},
          {"communication_s", s.communication_s},
          {"peak_memory_bytes", s.peak_memory_bytes},
          {"memory_capacity_bytes", s.memory_capacity_bytes},
          {"fits", s.fits},
          {"memory_per_stage", mem},
          {"state_bytes_per_parameter",
           {{"parameters", s.state_bytes.parameters},
            {"gradients", s.state_bytes.gradients},
            {"optimizer", s.state_bytes.optimizer}}},
          {"state_shards",
           {{"parameters", s.parameter_shards},
            {"gradients", s.gradient_shards},
            {"optimizer", s.optimizer_shards}}},
          {"breakdown", s.breakdown.known ? to_json(s.breakdown) : nlohmann::json(nullptr)},
          {"replicas_simulated_once", s.replicas_simulated_once},
          {"simulated_ranks", s.simulated_ranks},
          {"simulated_actions", s.simulated_actions},
          {"simulator_seconds", s.simulator_seconds}};
}

}  // namespace meshscope::predict
