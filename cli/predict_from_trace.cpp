// `meshscope predict --from-trace DIR`: replays a torch pipelining job with the costs its traces
// show, first the schedule that ran (with its error against the measured step), then alternatives.
//
// Costs, from the job's compute spans (an imported job's ops under its compute actions):
//   per stage   F, B, I, W = the mean over the stage's microbatches and steps of the time from the
//               first to the last op of that phase (the python between them counts, the wait for
//               the input before the first op does not);
//               a stage measured with B only gets I = W = B / 2 for schedules that split it
//               (assumption: the even split of Qi et al. 2023, "Zero Bubble Pipeline
//               Parallelism", whose ZB schedules take T_F = T_B = T_W), one measured with I and
//               W gets B = I + W.
//   transfers   a latency per send: the median over the paired gloo:send -> gloo:recv ranges (else
//               c10d::send -> c10d::recv_ ops) of (recv end - max(send begin, recv begin)), the
//               time a posted recv still needed once both sides were posted;
//               no bandwidth term (the traces record no tensor sizes).
// Alternatives run on the same pp and microbatches (or --pp / --microbatches) with the run's
// total F, B, I, W spread evenly over their stages (assumption: layers split evenly).
#include "cli/predict_from_trace.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "cli/torch_trace_schedule.h"
#include "cli/trace_replay_costs.h"
#include "sim/engine/engine.h"
#include "sim/schedule/families.h"
#include "sim/schedule/generators.h"
#include "traces/analysis.h"

namespace meshscope::cli {
namespace {

struct Row {
  std::string schedule;
  int stages = 0;
  std::optional<int64_t> step_ns;
  std::string error;
};

}  // namespace

void run_predict_from_trace(const PredictFromTraceArgs& args) {
  const traces::Timeline t = load_torch_job(args.trace);
  const RecoveredSchedule ran = recover_torch_schedule(t, args.trace);
  const traces::TimelineAnalysis a = traces::analyze(t);
  // With dp > 1 each pipeline group ran the same schedule: the first one is replayed.
  const ReplayCosts m = measure_replay_costs(t, a, ran.groups > 1 ? ran.ranks : std::vector<int>{});
  const ReplayTerms terms;
  const schedule::Schedule& s = ran.parsed.schedule;
  const int pp = args.pp > 0 ? args.pp : s.mesh.pp;
  const int microbatches = args.microbatches > 0 ? args.microbatches : s.num_microbatches;
  const int64_t measured = a.step_time_ns;

  std::vector<Row> rows;
  {
    Row r{"as run (" +
              std::string(t.metadata.count("rank 0.pipeline_runtime") ? "torch" : "trace") + ")",
          s.num_stages, std::nullopt, ""};
    for (int k = 0; k < s.num_stages; ++k) {
      if (!m.stages.count(k)) {
        throw UserError(args.trace + ": stage " + std::to_string(k) + " has no measured compute");
      }
    }
    try {
      r.step_ns = replay_step(
          s, m, {.per_action = true, .same_stages = true, .same_ranks = true, .terms = terms});
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    rows.push_back(std::move(r));
    // The same schedule on the alternatives' costs: what averaging over actions loses.
    Row mean_row{"as run, mean costs", s.num_stages, std::nullopt, ""};
    try {
      mean_row.step_ns = replay_step(
          s, m, {.per_action = false, .same_stages = true, .same_ranks = true, .terms = terms});
    } catch (const std::exception& e) {
      mean_row.error = e.what();
    }
    rows.push_back(std::move(mean_row));
  }
  // Every pipeline family (the descriptor's: not the pp = 1 ones), at its default chunks per rank.
  for (size_t fi = 0; fi < schedule::kFamilies.size(); ++fi) {
    const auto f = static_cast<schedule::Family>(fi);
    const schedule::FamilyInfo& info = schedule::info(f);
    if (info.pp_one_only || f == schedule::Family::kNaive) continue;
    if (!args.schedule.empty() && args.schedule != info.name) continue;
    schedule::GeneratorConfig config;
    config.family = f;
    config.mesh = {.dp = 1, .pp = pp, .tp = 1};
    config.microbatches = microbatches;
    config.virtual_stages = info.default_virtual_stages;
    Row r{std::string(schedule::name(f)), pp * config.virtual_stages, std::nullopt, ""};
    try {
      const schedule::Schedule alt = schedule::generate(config);
      r.step_ns = replay_step(alt, m,
                              {.per_action = false,
                               .same_stages = alt.num_stages == s.num_stages,
                               .same_ranks = pp == s.mesh.pp,
                               .terms = terms});
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    rows.push_back(std::move(r));
  }

  const auto error_of = [&](const Row& r) {
    return measured > 0 && r.step_ns
               ? 100.0 * static_cast<double>(*r.step_ns - measured) / static_cast<double>(measured)
               : 0.0;
  };
  if (args.json) {
    // The schedule that ran, replayed with each term of the cost model left out in turn.
    nlohmann::json without = nlohmann::json::object();
    for (const auto& [name, term] :
         {std::pair{"host_gap", ReplayTerms{.host_gap = false, .edge = true}},
          std::pair{"edge", ReplayTerms{.host_gap = true, .edge = false}}}) {
      try {
        without[name] = replay_step(
            s, m, {.per_action = true, .same_stages = true, .same_ranks = true, .terms = term});
      } catch (const std::exception&) {
        without[name] = nullptr;
      }
    }
    nlohmann::json gaps = nlohmann::json::object();
    for (const auto& [stage, device] : m.stage_device) {
      if (stage >= s.mesh.pp) break;
      const auto g = m.host_gap_ns.find(device);
      gaps[std::to_string(stage)] = g == m.host_gap_ns.end() ? 0 : g->second;
    }
    nlohmann::json out = {{"measured_step_ns", measured},
                          {"costs",
                           {{"host_gap_ns_by_rank", gaps},
                            {"edge_ns", m.edge_ns},
                            {"transfer_latency_ns", m.latency_ns},
                            {"actions_waited", m.latency_samples}}},
                          {"as_run_without_ns", without},
                          {"pipeline_groups", ran.groups},
                          {"replayed_ranks", ran.ranks},
                          {"transfer_latency_ns", m.latency_ns},
                          {"pp", pp},
                          {"microbatches", microbatches},
                          {"rows", nlohmann::json::array()}};
    for (const Row& r : rows) {
      nlohmann::json j = {{"schedule", r.schedule}, {"stages", r.stages}};
      if (r.step_ns) {
        j["step_ns"] = *r.step_ns;
        j["vs_measured_percent"] = error_of(r);
      } else {
        j["error"] = r.error;
      }
      out["rows"].push_back(std::move(j));
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("measured step: %s   pp %d, %d microbatches\n",
              traces::format_duration(measured).c_str(), pp, microbatches);
  if (ran.groups > 1) {
    std::string ranks;
    for (const int r : ran.ranks) ranks += " " + std::to_string(r);
    std::printf("%d pipeline groups (dp %d): replaying the first, ranks%s\n", ran.groups,
                ran.groups, ranks.c_str());
  }
  std::printf("replay costs, from the trace (docs/ACCURACY.md, \"Replaying an imported job\"):\n");
  for (const auto& [stage, st] : m.stages) {
    std::printf("  stage %d work   F %s  B %s  I %s  W %s\n", stage,
                traces::format_duration(st.forward_ns).c_str(),
                traces::format_duration(st.backward_ns).c_str(),
                traces::format_duration(st.input_grad_ns).c_str(),
                traces::format_duration(st.weight_grad_ns).c_str());
  }
  std::string gaps;
  for (const auto& [stage, device] : m.stage_device) {
    if (stage >= s.mesh.pp) break;
    const auto g = m.host_gap_ns.find(device);
    gaps += "  rank " + std::to_string(stage) + " " +
            traces::format_duration(g == m.host_gap_ns.end() ? 0 : g->second);
  }
  std::printf("  host gap per compute action:%s  (%zu gaps)\n", gaps.c_str(), m.gap_samples);
  std::printf(
      "  transfer latency %s (mean; %zu actions waited for theirs)   outside the pipeline "
      "%s\n\n",
      traces::format_duration(m.latency_ns).c_str(), m.latency_samples,
      traces::format_duration(m.edge_ns).c_str());
  std::printf("%-22s %7s %14s %12s\n", "schedule", "stages", "step", "vs measured");
  for (const Row& r : rows) {
    if (r.step_ns) {
      std::printf("%-22s %7d %14s %+11.1f%%\n", r.schedule.c_str(), r.stages,
                  traces::format_duration(*r.step_ns).c_str(), error_of(r));
    } else {
      std::printf("%-22s %7d %14s %s\n", r.schedule.c_str(), r.stages, "-", r.error.c_str());
    }
  }
}

}  // namespace meshscope::cli
