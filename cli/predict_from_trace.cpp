// `meshscope predict --from-trace DIR`: replays a torch pipelining job with the costs its traces
// show, first the schedule that ran (with its error against the measured step), then alternatives
// (sim/predict/trace_replay.h; the costs: sim/predict/trace_replay_costs.h).
#include "cli/predict_from_trace.h"
#include "cli/json_text.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/torch_trace_schedule.h"
#include "sim/predict/trace_replay.h"
#include "traces/analysis.h"

namespace meshscope::cli {

void run_predict_from_trace(const PredictFromTraceArgs& args) {
  const traces::Timeline t = load_torch_job(args.trace, "predict");
  const RecoveredSchedule ran = recover_torch_schedule(t, args.trace);
  const traces::TimelineAnalysis a = traces::analyze(t);
  predict::TraceReplay replay;
  try {
    replay = predict::replay_trace(
        t, a, ran, {.schedule = args.schedule, .pp = args.pp, .microbatches = args.microbatches},
        args.trace);
  } catch (const predict::TraceReplayError& e) {
    throw UserError(e.what());
  }
  const predict::ReplayCosts& m = replay.costs;
  const schedule::Schedule& s = ran.parsed.schedule;
  // The run's pipeline; the alternatives run on --pp and --microbatches when given.
  const int pp = s.mesh.pp;
  const int microbatches = s.num_microbatches;
  const bool alternatives_differ = replay.pp != pp || replay.microbatches != microbatches;
  const int64_t measured = replay.measured_ns;
  const std::vector<predict::TraceReplayRow>& rows = replay.rows;
  const auto error_of = [&](const predict::TraceReplayRow& r) {
    return predict::vs_measured_percent(replay, r);
  };
  if (args.json) {
    // The schedule that ran, replayed with each term of the cost model left out in turn.
    nlohmann::json without = nlohmann::json::object();
    for (const auto& [name, term] :
         {std::pair{"host_gap", predict::ReplayTerms{.host_gap = false, .edge = true}},
          std::pair{"edge", predict::ReplayTerms{.host_gap = true, .edge = false}}}) {
      try {
        without[name] = predict::replay_step(
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
    nlohmann::json out = {
        {"measured_step_ns", measured},
        {"costs",
         {{"host_gap_ns_by_rank", gaps},
          {"edge_ns", m.edge_ns},
          {"transfer_latency_ns", m.latency_ns},
          {"actions_waited", m.latency_samples}}},
        {"as_run_without_ns", without},
        {"pipeline_groups", ran.groups},
        {"replayed_ranks", ran.ranks},
        {"first_rank_of_another_schedule",
         ran.differing_rank < 0 ? nlohmann::json() : nlohmann::json(ran.differing_rank)},
        {"pp", pp},
        {"microbatches", microbatches},
        {"alternatives_pp", replay.pp},
        {"alternatives_microbatches", replay.microbatches},
        {"rows", nlohmann::json::array()}};
    for (const predict::TraceReplayRow& r : rows) {
      nlohmann::json j = {{"schedule", r.schedule}, {"stages", r.stages}};
      if (r.step_ns) {
        j["step_ns"] = *r.step_ns;
        j["vs_measured_percent"] = error_of(r);
      } else {
        j["error"] = r.error;
      }
      out["rows"].push_back(std::move(j));
    }
    std::printf("%s\n", json_text(out).c_str());
    return;
  }
  std::printf("measured step: %s   pp %d, %d microbatches\n",
              traces::format_duration(measured).c_str(), pp, microbatches);
  if (alternatives_differ) {
    std::printf(
        "alternatives: pp %d, %d microbatches (--pp, --microbatches), against the measured "
        "step of the run above\n",
        replay.pp, replay.microbatches);
    // Other microbatches are other work a step: "vs measured" then holds that difference too.
    if (replay.microbatches != microbatches)
      std::printf(
          "  a step of %d microbatches does %.3g times the work of the run's %d: each row's \"vs "
          "measured\" below \"as run\" includes that\n",
          replay.microbatches, static_cast<double>(replay.microbatches) / microbatches,
          microbatches);
  }
  if (ran.groups > 1) {
    std::string ranks;
    for (const int r : ran.ranks) ranks += " " + std::to_string(r);
    std::printf("%d pipeline groups (dp %d): replaying the first, ranks%s\n", ran.groups,
                ran.groups, ranks.c_str());
    if (ran.differing_rank >= 0)
      std::printf("  global rank %d ran other actions than its place in the first group\n",
                  ran.differing_rank);
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
  for (const predict::TraceReplayRow& r : rows) {
    if (r.step_ns) {
      std::printf("%-22s %7d %14s %+11.1f%%\n", r.schedule.c_str(), r.stages,
                  traces::format_duration(*r.step_ns).c_str(), error_of(r));
    } else {
      std::printf("%-22s %7d %14s %s\n", r.schedule.c_str(), r.stages, "-", r.error.c_str());
    }
  }
  // What the alternatives' figures can be trusted to: their costs are the means above.
  for (const predict::TraceReplayRow& r : rows) {
    if (r.schedule != "as run, mean costs" || !r.step_ns) continue;
    std::printf(
        "\"as run\" replays each action with its own measured work and gap (its wait included): "
        "it is near the\nmeasured step by construction, no test of the model; every row below it "
        "replays the mean costs\nabove: \"as run, mean costs\" (%+.1f%%) is what the means alone "
        "miss, and a family of more actions\nper rank pays the host gap once per action "
        "(docs/ACCURACY.md)\n",
        error_of(r));
  }
}

}  // namespace meshscope::cli
