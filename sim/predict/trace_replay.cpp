// Replaying a measured torch pipelining job as it ran and as the other families would run it.
//
// Alternatives run on the same pp and microbatches (or the options') with the run's total
// F, B, I, W spread evenly over their stages (assumption: layers split evenly).
#include "sim/predict/trace_replay.h"

#include <exception>
#include <utility>

#include "sim/schedule/families.h"
#include "sim/schedule/generators.h"

namespace meshscope::predict {

TraceReplay replay_trace(const traces::Timeline& t, const traces::TimelineAnalysis& a,
                         const RecoveredSchedule& ran, const TraceReplayOptions& o,
                         const std::string& path) {
  TraceReplay out;
  // With dp > 1 each pipeline group ran the same schedule: the first one is replayed.
  out.costs = measure_replay_costs(t, a, ran.groups > 1 ? ran.ranks : std::vector<int>{});
  const ReplayCosts& m = out.costs;
  const ReplayTerms terms;
  const schedule::Schedule& s = ran.parsed.schedule;
  out.pp = o.pp > 0 ? o.pp : s.mesh.pp;
  out.microbatches = o.microbatches > 0 ? o.microbatches : s.num_microbatches;
  out.measured_ns = a.step_time_ns;

  for (int k = 0; k < s.num_stages; ++k) {
    if (!m.stages.count(k)) {
      throw TraceReplayError(path + ": stage " + std::to_string(k) + " has no measured compute");
    }
  }
  const auto replayed = [&](TraceReplayRow r, const schedule::Schedule& x,
                            const ReplayOptions& ro) {
    try {
      r.step_ns = replay_step(x, m, ro);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    out.rows.push_back(std::move(r));
  };
  replayed({"as run (" +
                std::string(t.metadata.count("rank 0.pipeline_runtime") ? "torch" : "trace") + ")",
            s.num_stages, std::nullopt, ""},
           s, {.per_action = true, .same_stages = true, .same_ranks = true, .terms = terms});
  // The same schedule on the alternatives' costs: what averaging over actions loses.
  replayed({"as run, mean costs", s.num_stages, std::nullopt, ""}, s,
           {.per_action = false, .same_stages = true, .same_ranks = true, .terms = terms});
  // Every pipeline family (the descriptor's: not the pp = 1 ones), at its default chunks per rank.
  for (size_t fi = 0; fi < schedule::kFamilies.size(); ++fi) {
    const auto f = static_cast<schedule::Family>(fi);
    const schedule::FamilyInfo& info = schedule::info(f);
    if (info.pp_one_only || f == schedule::Family::kNaive) continue;
    if (!o.schedule.empty() && o.schedule != info.name) continue;
    schedule::GeneratorConfig config;
    config.family = f;
    config.mesh = {.dp = 1, .pp = out.pp, .tp = 1};
    config.microbatches = out.microbatches;
    config.virtual_stages = info.default_virtual_stages;
    TraceReplayRow r{std::string(schedule::name(f)), out.pp * config.virtual_stages, std::nullopt,
                     ""};
    try {
      const schedule::Schedule alt = schedule::generate(config);
      r.step_ns = replay_step(alt, m, alternative_options(alt, s));
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    out.rows.push_back(std::move(r));
  }
  return out;
}

ReplayOptions alternative_options(const schedule::Schedule& alt, const schedule::Schedule& ran) {
  return {.per_action = false,
          .same_stages = alt.num_stages == ran.num_stages,
          .same_ranks = alt.mesh.pp == ran.mesh.pp,
          .terms = ReplayTerms{}};
}

double vs_measured_percent(const TraceReplay& r, const TraceReplayRow& row) {
  return r.measured_ns > 0 && row.step_ns
             ? 100.0 * static_cast<double>(*row.step_ns - r.measured_ns) /
                   static_cast<double>(r.measured_ns)
             : 0.0;
}

}  // namespace meshscope::predict
