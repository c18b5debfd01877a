// Binds the what-if view to the simulator (sim/predict's simulate) and, for an imported torch
// pipelining job, to the replay of its own traces (sim/predict/trace_replay.h).
#include "gui/app/predictor.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/cost/board.h"
#include "sim/cost/hardware.h"
#include "sim/predict/calibrate_model.h"
#include "sim/predict/config.h"
#include "sim/predict/run_workload.h"
#include "sim/predict/simulate.h"
#include "sim/predict/trace_replay.h"
#include "sim/schedule/generators.h"
#include "traces/analysis.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::gui {
namespace {

// The executor's default workload (sim/model/workload.h), for a configuration that names none.
traces::WorkloadDescriptor default_workload() {
  traces::WorkloadDescriptor w;
  w.kind = traces::ModelKind::kMlp;
  w.layers = 8;
  w.hidden = 256;
  return w;
}

// The predictor's calibration from the shown run, shared by its simulate and calibrate.
class Fitted {
 public:
  std::shared_ptr<const cost::Calibration> get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cal_;
  }

  // Calibrates from the run's compute spans (predict::calibrate_against_model, as `meshscope
  // calibrate` does); a run the simulator cannot rebuild, or that ran elsewhere than on the
  // CPU, leaves the predictor uncalibrated and says why.
  std::string fit(const traces::Timeline& t, const std::string& hw_name) {
    set(nullptr);
    if (t.run.source != traces::RunSource::kCpu) {
      throw std::invalid_argument(
          "not calibrated: the run is not one of meshscope's cpu runs (source " +
          std::string(traces::name(t.run.source)) + ")");
    }
    const cost::Hardware hw = cost::find_hardware(hw_name);
    int rebuilt = 0;
    std::shared_ptr<cost::Calibration> cal;
    try {
      cal = std::make_shared<cost::Calibration>(
          predict::calibrate_against_model({&t}, hw, cost::Precision::kFp32, &rebuilt));
    } catch (const std::invalid_argument& e) {  // a workload past this process's memory
      throw std::invalid_argument(std::string("not calibrated: ") + e.what());
    }
    if (rebuilt == 0) {
      throw std::invalid_argument(
          "not calibrated: the run's workload is not one the simulator rebuilds");
    }
    const cost::PhaseFit& f = cal->phase(traces::Phase::kForward);
    const cost::PhaseFit& b = cal->phase(traces::Phase::kBackward);
    char line[200];
    std::snprintf(line, sizeof line,
                  "calibrated on %s from this run's compute spans: forward %.2fx (%d spans), "
                  "backward %.2fx (%d spans) the op model",
                  hw.name.c_str(), f.model_scale, f.samples, b.model_scale, b.samples);
    set(std::move(cal));
    // As `meshscope calibrate` warns: ranks that outnumbered the cores waited for one inside
    // their spans.
    const int64_t cores = t.run.cores;
    if (cores > 0 && static_cast<int64_t>(t.devices.size()) > cores) {
      return std::string(line) + "; but its " + std::to_string(t.devices.size()) +
             " ranks shared " + std::to_string(cores) + (cores == 1 ? " core" : " cores") +
             ", so its spans include waiting for one and the rates are too slow (calibrate on a "
             "run with a core per rank)";
    }
    return line;
  }

 private:
  void set(std::shared_ptr<const cost::Calibration> c) {
    std::lock_guard<std::mutex> lock(mu_);
    cal_ = std::move(c);
  }
  mutable std::mutex mu_;
  std::shared_ptr<const cost::Calibration> cal_;
};

// The shown torch job's replay costs and the schedule that ran, set by replay_measured and read
// by simulate (from the simulation thread); null when the shown run is not such a job.
struct TraceModel {
  predict::ReplayCosts costs;
  schedule::Schedule ran;
};
class Replayed {
 public:
  std::shared_ptr<const TraceModel> get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return model_;
  }
  void set(std::shared_ptr<const TraceModel> m) {
    std::lock_guard<std::mutex> lock(mu_);
    model_ = std::move(m);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const TraceModel> model_;
};

predict::PredictConfig to_predict_config(const WhatIfConfig& c,
                                         const std::string& default_hardware) {
  predict::PredictConfig pc;
  // A simulated run's own configuration carries its framework and options; the fields below
  // set what the panel varies. One that no longer parses here (a hardware file named by a path
  // relative to where it was simulated) leaves the defaults, as for any other run.
  bool from_config = false;
  if (!c.config.empty()) {
    try {
      pc = predict::parse_config(nlohmann::json::parse(c.config), "the shown run's config");
      from_config = true;
    } catch (const std::exception&) {
      pc = predict::PredictConfig{};
    }
  }
  if (!from_config)
    predict::apply_workload(
        c.workload.kind == traces::ModelKind::kUnknown ? default_workload() : c.workload, pc);
  const auto family = schedule::parse_family(c.schedule);
  if (!family) throw std::invalid_argument("what-if: unknown schedule '" + c.schedule + "'");
  pc.schedule = *family;
  // The what-if's chunk count, kept inside what the family takes (families.h).
  const schedule::FamilyInfo& fi = schedule::info(*family);
  pc.virtual_stages = std::clamp(c.virtual_stages, fi.min_virtual_stages,
                                 fi.max_virtual_stages > 0 ? fi.max_virtual_stages : 1 << 20);
  pc.mesh = mesh::MeshShape{c.dp, c.pp, c.tp};
  pc.micro_batch = std::max<int64_t>(c.micro_batch, 1);
  pc.global_batch = pc.micro_batch * c.dp * c.microbatches;
  pc.gpu = c.hardware.empty() ? default_hardware : c.hardware;
  // The run's own number format: a calibration from a cpu run (Fitted::fit, fp32) scales the op
  // model of that format; at cpu-local's bf16 peak, twice its fp32 one, the prediction of an fp32
  // run would come out about twice as fast as the run.
  if (!c.precision.empty()) {
    const std::optional<cost::Precision> p = cost::parse_precision(c.precision);
    if (!p) throw std::invalid_argument("what-if: unknown precision '" + c.precision + "'");
    pc.precision = *p;
  }
  return pc;
}

// An imported torch pipelining job replayed from its own traces, the rows `meshscope predict
// --from-trace` prints (sim/predict/trace_replay.h); nullopt for a run without torch pipeline
// actions.
std::optional<ReplayTable> replay_torch_job(const traces::Timeline& t, Replayed& model) {
  model.set(nullptr);
  const auto orders = traces::importer::torch_action_orders(t);
  if (orders.empty()) return std::nullopt;
  const std::string what = "the shown job";
  predict::RecoveredSchedule ran;
  predict::TraceReplay replay;
  try {
    ran = predict::recover_schedule(orders, traces::importer::torch_pipeline_groups(t), what);
    replay = predict::replay_trace(t, traces::analyze(t), ran, {}, what);
  } catch (const predict::RecoveryError& e) {
    throw std::invalid_argument(e.what());
  } catch (const predict::TraceReplayError& e) {
    throw std::invalid_argument(e.what());
  }
  const auto row_of = [&](const predict::TraceReplayRow& r) {
    ReplayRow out;
    out.schedule = r.schedule;
    out.stages = r.stages;
    out.step_ns = r.step_ns.value_or(0);
    out.error_percent = predict::vs_measured_percent(replay, r);
    out.error = r.error;
    return out;
  };
  ReplayTable table;
  table.measured_ns = replay.measured_ns;
  table.as_run = row_of(replay.rows.at(0));
  table.as_run_mean = row_of(replay.rows.at(1));
  const schedule::Schedule& run_schedule = ran.parsed.schedule;
  const std::optional<schedule::Family> running = schedule::family_running(run_schedule);
  for (size_t i = 2; i < replay.rows.size(); ++i) {
    // The family that ran is the row above ("as run, mean costs"), not something to run instead.
    if (running && replay.rows[i].schedule == schedule::name(*running)) continue;
    table.alternatives.push_back(row_of(replay.rows[i]));
  }
  char line[400];
  // A dp > 1 job: its first pipeline group is replayed, as predict --from-trace says (the panel
  // had said "on 3 ranks" of a 6-rank job).
  const std::string groups = ran.groups > 1
                                 ? ", the first of its " + std::to_string(ran.groups) +
                                       " pipeline groups (dp " + std::to_string(ran.groups) + ")"
                                 : std::string();
  std::snprintf(line, sizeof line,
                "calibrated from this job's traces (the schedule that ran on %zu ranks%s, pp %d, "
                "%d microbatches): each action's measured work and host gap; the alternatives "
                "(and the panel's dp = tp = 1 predictions) get the mean per stage and phase, as "
                "`meshscope predict --from-trace` replays it",
                ran.ranks.size(), groups.c_str(), replay.pp, replay.microbatches);
  table.calibrated_from = line;
  if (const std::optional<schedule::Family> f = running) {
    table.family = std::string(schedule::name(*f));
    table.pp = run_schedule.mesh.pp;
    table.virtual_stages = run_schedule.virtual_stages();
    table.microbatches = run_schedule.num_microbatches;
  }
  model.set(
      std::make_shared<const TraceModel>(TraceModel{std::move(replay.costs), ran.parsed.schedule}));
  return table;
}

// A configuration simulated on the shown torch job's replay costs (the alternatives' rows of its
// table, without the time outside the pipeline): the family's schedule on the engine.
traces::Timeline simulate_on_trace(const WhatIfConfig& c, const TraceModel& m) {
  const auto family = schedule::parse_family(c.schedule);
  if (!family) throw std::invalid_argument("what-if: unknown schedule '" + c.schedule + "'");
  const schedule::FamilyInfo& fi = schedule::info(*family);
  schedule::GeneratorConfig g;
  g.family = *family;
  g.mesh = {.dp = 1, .pp = c.pp, .tp = 1};
  g.microbatches = c.microbatches;
  g.virtual_stages = std::clamp(c.virtual_stages, fi.min_virtual_stages,
                                fi.max_virtual_stages > 0 ? fi.max_virtual_stages : 1 << 20);
  const schedule::Schedule alt = schedule::generate(g);
  traces::Timeline t =
      predict::replay_engine(alt, m.costs, predict::alternative_options(alt, m.ran), true).timeline;
  t.run.family = std::string(fi.name);
  t.run.backend = "sim";
  t.metadata["backend"] = "sim";
  t.metadata["model"] = "replayed on the shown job's measured costs";
  return t;
}

}  // namespace

std::optional<Predictor> make_predictor() {
  Predictor p;
  for (const auto& f : schedule::kFamilies) p.schedules.emplace_back(f.name);
  p.hardware = cost::list_hardware();
  // Measured runs on these machines come from the CPU backend: predict on the same hardware
  // unless the panel picks another.
  p.default_hardware =
      std::find(p.hardware.begin(), p.hardware.end(), "cpu-local") != p.hardware.end()
          ? "cpu-local"
          : (p.hardware.empty() ? "" : p.hardware.front());
  p.hardware_of_board = [listed = p.hardware](const std::string& board) {
    const std::string entry = cost::hardware_for_board(board);
    return std::find(listed.begin(), listed.end(), entry) != listed.end() ? entry : std::string();
  };
  // The calibration is set from the UI thread and read by the simulation thread.
  auto fitted = std::make_shared<Fitted>();
  auto replayed = std::make_shared<Replayed>();
  p.simulate = [hw = p.default_hardware, fitted, replayed](const WhatIfConfig& c) {
    // A torch job shown: one pipeline (dp = tp = 1) replays on its own measured costs.
    if (const std::shared_ptr<const TraceModel> m = replayed->get(); m && c.dp == 1 && c.tp == 1) {
      return simulate_on_trace(c, *m);
    }
    predict::SimulateOptions options;
    options.expand_replicas = true;  // every device of the mesh gets its row and cell
    const predict::PredictConfig pc = to_predict_config(c, hw);
    // A run whose trace claims 10^7 layers had the simulation thread build them until the kernel
    // killed the viewer: said in the panel instead, as `predict --config` refuses such a config.
    if (const std::optional<predict::FootprintProblem> problem = predict::footprint_problem(pc))
      throw std::invalid_argument("not simulated: " + problem->reason);
    const std::shared_ptr<const cost::Calibration> cal = fitted->get();
    if (cal && cal->hardware == pc.gpu) options.calibration = cal.get();
    return predict::simulate(pc, options).timeline;
  };
  p.calibrate = [hw = p.default_hardware, fitted](const traces::Timeline& measured) {
    return fitted->fit(measured, hw);
  };
  p.replay_measured = [replayed](const traces::Timeline& measured) {
    return replay_torch_job(measured, *replayed);
  };
  return p;
}

}  // namespace meshscope::gui
