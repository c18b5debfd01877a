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
#include "sim/engine/engine.h"
#include "sim/schedule/families.h"
#include "sim/schedule/generators.h"
#include "traces/analysis.h"

namespace meshscope::cli {
namespace {

struct MeasuredCosts {
  std::map<int, engine::StageTiming> stages;  // by stage
  int64_t total[5] = {0, 0, 0, 0, 0};         // Σ per-microbatch cost over stages, by Phase
  int64_t latency_ns = 0;
};

MeasuredCosts measure(const traces::Timeline& t, const traces::TimelineAnalysis& a) {
  MeasuredCosts m;
  // Each (stage, phase, microbatch, step)'s compute spans, first begin to last end.
  std::map<std::tuple<int, traces::Phase, int32_t, size_t>, std::pair<int64_t, int64_t>> extent;
  for (const traces::Span& s : t.spans) {
    if (s.kind != traces::SpanKind::kCompute || s.stage < 0 || s.microbatch < 0) continue;
    const auto w =
        std::upper_bound(a.windows.begin(), a.windows.end(), s.begin_ns,
                         [](int64_t v, const traces::Interval& iv) { return v < iv.begin_ns; });
    if (w == a.windows.begin() || s.begin_ns >= std::prev(w)->end_ns) continue;
    const auto key = std::tuple(static_cast<int>(s.stage), s.phase, s.microbatch,
                                static_cast<size_t>(w - a.windows.begin()));
    auto [it, fresh] = extent.try_emplace(key, s.begin_ns, s.end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, s.begin_ns);
      it->second.second = std::max(it->second.second, s.end_ns);
    }
  }
  std::map<std::pair<int, traces::Phase>, std::pair<int64_t, int64_t>> sum;  // total, count
  for (const auto& [key, e] : extent) {
    auto& [total, count] = sum[{std::get<0>(key), std::get<1>(key)}];
    total += e.second - e.first;
    ++count;
  }
  for (const auto& [key, tc] : sum) {
    const int64_t per = tc.first / tc.second;
    engine::StageTiming& st = m.stages[key.first];
    switch (key.second) {
      case traces::Phase::kForward:
        st.forward_ns = per;
        break;
      case traces::Phase::kBackward:
        st.backward_ns = per;
        break;
      case traces::Phase::kInputGrad:
        st.input_grad_ns = per;
        break;
      case traces::Phase::kWeightGrad:
        st.weight_grad_ns = per;
        break;
      default:
        break;
    }
  }
  for (auto& [stage, st] : m.stages) {
    if (st.backward_ns == 0) st.backward_ns = st.input_grad_ns + st.weight_grad_ns;
    if (st.input_grad_ns == 0 && st.weight_grad_ns == 0) {
      st.input_grad_ns = st.backward_ns / 2;
      st.weight_grad_ns = st.backward_ns - st.input_grad_ns;
    }
    m.total[static_cast<size_t>(traces::Phase::kForward)] += st.forward_ns;
    m.total[static_cast<size_t>(traces::Phase::kBackward)] += st.backward_ns;
    m.total[static_cast<size_t>(traces::Phase::kInputGrad)] += st.input_grad_ns;
    m.total[static_cast<size_t>(traces::Phase::kWeightGrad)] += st.weight_grad_ns;
  }
  // gloo's ranges run from post to completion; NCCL's (and other) transfers are their c10d ops.
  std::vector<int64_t> waits[2];
  for (const traces::Flow& f : t.flows) {
    const traces::Span& s = t.spans[f.from];
    const traces::Span& r = t.spans[f.to];
    const bool gloo = t.span_name(s) == "gloo:send" && t.span_name(r) == "gloo:recv";
    const bool c10d = t.span_name(s) == "c10d::send" && t.span_name(r) == "c10d::recv_";
    if (!gloo && !c10d) continue;
    waits[gloo ? 0 : 1].push_back(
        std::max<int64_t>(0, r.end_ns - std::max(s.begin_ns, r.begin_ns)));
  }
  const std::vector<int64_t>& chosen = waits[0].empty() ? waits[1] : waits[0];
  if (!chosen.empty()) {
    std::vector<int64_t> w = chosen;
    std::nth_element(w.begin(), w.begin() + w.size() / 2, w.end());
    m.latency_ns = w[w.size() / 2];
  }
  return m;
}

struct Row {
  std::string schedule;
  int stages = 0;
  std::optional<int64_t> step_ns;
  std::string error;
};

int64_t simulate_step(const schedule::Schedule& s, const std::vector<engine::StageTiming>& stages,
                      int64_t latency_ns) {
  engine::EngineInput in;
  in.schedule = &s;
  in.stages = stages;
  in.links = {engine::LinkSpec{1e18, latency_ns}};
  in.build_timeline = false;
  return engine::simulate(in).step_time_ns;
}

}  // namespace

void run_predict_from_trace(const PredictFromTraceArgs& args) {
  const traces::Timeline t = load_torch_job(args.trace);
  const RecoveredSchedule ran = recover_torch_schedule(t, args.trace);
  const traces::TimelineAnalysis a = traces::analyze(t);
  const MeasuredCosts m = measure(t, a);
  const schedule::Schedule& s = ran.parsed.schedule;
  const int pp = args.pp > 0 ? args.pp : s.mesh.pp;
  const int microbatches = args.microbatches > 0 ? args.microbatches : s.num_microbatches;
  const int64_t measured = a.step_time_ns;

  std::vector<Row> rows;
  {
    Row r{"as run (" +
              std::string(t.metadata.count("rank 0.pipeline_runtime") ? "torch" : "trace") + ")",
          s.num_stages, std::nullopt, ""};
    std::vector<engine::StageTiming> stages(static_cast<size_t>(s.num_stages));
    for (int k = 0; k < s.num_stages; ++k) {
      const auto it = m.stages.find(k);
      if (it == m.stages.end()) {
        throw UserError(args.trace + ": stage " + std::to_string(k) + " has no measured compute");
      }
      stages[static_cast<size_t>(k)] = it->second;
    }
    try {
      r.step_ns = simulate_step(s, stages, m.latency_ns);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    rows.push_back(std::move(r));
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
      std::vector<engine::StageTiming> stages(static_cast<size_t>(alt.num_stages));
      for (engine::StageTiming& st : stages) {
        st.forward_ns = m.total[static_cast<size_t>(traces::Phase::kForward)] / alt.num_stages;
        st.backward_ns = m.total[static_cast<size_t>(traces::Phase::kBackward)] / alt.num_stages;
        st.input_grad_ns = m.total[static_cast<size_t>(traces::Phase::kInputGrad)] / alt.num_stages;
        st.weight_grad_ns =
            m.total[static_cast<size_t>(traces::Phase::kWeightGrad)] / alt.num_stages;
      }
      r.step_ns = simulate_step(alt, stages, m.latency_ns);
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
    nlohmann::json out = {{"measured_step_ns", measured},
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
  std::printf("measured step: %s   transfer latency: %s   pp %d, %d microbatches\n\n",
              traces::format_duration(measured).c_str(),
              traces::format_duration(m.latency_ns).c_str(), pp, microbatches);
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
