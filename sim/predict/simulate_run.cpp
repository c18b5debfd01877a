// The engine's run of a configuration: over the representatives of identical replicas once, or
// over every rank; a given schedule validated first (simulate_parts.h).
#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/engine/program.h"
#include "sim/engine/symmetry.h"
#include "sim/predict/footprint.h"
#include "sim/predict/simulate_parts.h"
#include "sim/predict/zero.h"
#include "sim/schedule/placement.h"
#include "sim/schedule/posted_receives.h"
#include "sim/schedule/validator.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"

namespace meshscope::predict::simulate_parts {
namespace {

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

}  // namespace

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

void check_full_footprint(const Resolved& r, bool timeline, bool writing) {
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

schedule::Schedule full_schedule(const Resolved& r) {
  const PredictConfig& c = r.config;
  schedule::Schedule s = generate_or_explain(r.generator);
  apply_zero(s, c.zero, c.data_parallel(), r.param_bytes, r.grad_bytes, c.shard_group,
             shards_once_a_step(c.zero, c.data_parallel(), c.mesh.pp, r.fw), c.cp);
  return s;
}

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

}  // namespace meshscope::predict::simulate_parts
