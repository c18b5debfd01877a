// The driver: checks the config, compiles plans, starts a thread per rank under the watchdog,
// gathers losses, weights and the Timeline.
#include "profiler/exec/executor.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "profiler/exec/progress.h"
#include "profiler/exec/rank_plan.h"
#include "profiler/exec/rank_worker.h"
#include "profiler/exec/step_barrier.h"
#include "profiler/exec/watchdog.h"
#include "sim/model/data.h"
#include "sim/model/workload_cost.h"

namespace meshscope::exec {
namespace {

void check_schedule(const schedule::Schedule& s, const mesh::Mesh& m, const model::Workload& w) {
  auto bad = [](const std::string& why) { throw std::invalid_argument("run: " + why); };
  if (!(s.mesh == m.shape())) {
    bad("the schedule is for mesh " + mesh::to_string(s.mesh) + " but the backend has " +
        mesh::to_string(m.shape()));
  }
  if (static_cast<int>(s.ranks.size()) != m.size()) {
    bad("the schedule has programs for " + std::to_string(s.ranks.size()) + " ranks, the mesh " +
        std::to_string(m.size()));
  }
  if (s.num_stages < 1 || static_cast<int>(s.stage_owner.size()) != s.num_stages) {
    bad("the schedule's stage_owner lists " + std::to_string(s.stage_owner.size()) +
        " stages, num_stages is " + std::to_string(s.num_stages));
  }
  for (int st = 0; st < s.num_stages; ++st) {
    if (s.stage_owner[st] < 0 || s.stage_owner[st] >= m.shape().pp) {
      bad("stage " + std::to_string(st) + " is placed on pp rank " +
          std::to_string(s.stage_owner[st]) + ", outside the mesh");
    }
  }
  if (s.num_stages > static_cast<int>(w.units.size())) {
    bad("the schedule has " + std::to_string(s.num_stages) + " stages but " + w.describe() +
        " has only " + std::to_string(w.units.size()) + " layers to split");
  }
  if (s.num_microbatches < 1) bad("the schedule needs at least one microbatch");
}

void check_size(const schedule::Schedule& s, const model::Workload& w, int steps) {
  int64_t actions = 0;
  for (const auto& program : s.ranks) actions += static_cast<int64_t>(program.size());
  const int64_t per_sample = w.loss == model::LossKind::kMse ? w.input_dim + w.output_dim
                                                             : w.input_dim + 1;
  const int64_t data_bytes = int64_t{steps} * w.spec.batch * per_sample * 4;
  if (actions > kMaxRecordedActions / steps) {
    throw std::invalid_argument("run: " + std::to_string(steps) + " steps of " +
                                std::to_string(actions) + " actions are more than the " +
                                std::to_string(kMaxRecordedActions) +
                                " actions a run records; run fewer steps");
  }
  if (data_bytes > kMaxDataBytes) {
    throw std::invalid_argument("run: the synthetic data of " + std::to_string(steps) +
                                " steps of " + std::to_string(w.spec.batch) + " samples takes " +
                                std::to_string(data_bytes >> 20) + " MiB, more than " +
                                std::to_string(kMaxDataBytes >> 20) +
                                " MiB; run fewer steps or a smaller batch");
  }
}

}  // namespace

int microbatch_rows(int batch, int dp, int microbatches) {
  return model::microbatch_rows(batch, dp, microbatches);
}

RunResult run(const RunConfig& config) {
  runtime::BackendOptions options = config.backend_options;
  options.mesh = config.schedule.mesh;
  if (options.log == nullptr) options.log = config.log;
  auto backend = runtime::make_backend(config.backend, options);
  auto tracer = capture::make_tracer(config.tracer, *backend);
  return run(config, *backend, *tracer);
}

RunResult run(const RunConfig& config, runtime::Backend& backend, capture::ActionTracer& tracer) {
  if (config.steps < 1) throw std::invalid_argument("run: steps must be >= 1");
  if (!(config.timeout_s > 0)) throw std::invalid_argument("run: timeout must be > 0 seconds");
  const model::Workload workload = model::make_workload(config.workload);
  const schedule::Schedule& sched = config.schedule;
  const mesh::Mesh& mesh = backend.mesh();
  check_schedule(sched, mesh, workload);
  check_size(sched, workload, config.steps);
  model::check_tp(workload, mesh.shape().tp);
  const int rows = microbatch_rows(workload.spec.batch, mesh.shape().dp, sched.num_microbatches);
  const auto partition = model::partition_units(static_cast<int>(workload.units.size()), sched.num_stages);
  const auto costs = model::stage_costs(workload, partition, mesh.shape().tp, rows);

  SharedRun shared;
  shared.workload = &workload;
  shared.schedule = &sched;
  shared.backend = &backend;
  shared.tracer = &tracer;
  shared.steps = config.steps;
  shared.rows = rows;
  shared.initial = model::init_weights(workload);
  for (int s = 0; s < config.steps; ++s) shared.batches.push_back(model::make_batch(workload, s));
  shared.plans = make_plans(workload, sched, mesh, partition, costs, rows);
  std::vector<std::vector<capture::ActionInfo>> programs;
  std::vector<std::vector<capture::InnerInfo>> inner;
  for (RankPlan& p : shared.plans) {
    programs.push_back(p.infos);
    inner.push_back(p.inner);
  }
  shared.programs = &programs;
  shared.inner = &inner;

  capture::RunInfo info;
  info.mesh = &mesh;
  info.schedule = &sched;
  info.steps = config.steps;
  info.backend = backend.description();
  info.programs = &programs;
  info.inner = &inner;
  info.metadata = {{"source", std::string(runtime::name(backend.kind()))},
                   {"schedule", sched.name},
                   {"mesh", mesh::to_string(mesh.shape())},
                   {"model", workload.describe()},
                   {"microbatches", std::to_string(sched.num_microbatches)},
                   {"stages", std::to_string(sched.num_stages)},
                   {"steps", std::to_string(config.steps)}};
  tracer.begin_run(info);

  const int world = mesh.size();
  std::vector<RankProgress> progress(world);
  StepBarrier barrier(world);
  shared.progress = &progress;
  shared.barrier = &barrier;
  shared.results.resize(world);
  auto abort_all = [&](const std::string& reason) {
    backend.abort(reason);
    barrier.abort(reason);
  };
  shared.abort = abort_all;

  {
    Watchdog watchdog(progress, config.timeout_s, [&] { return describe_ranks(shared); },
                      abort_all);
    std::vector<std::thread> threads;
    threads.reserve(world);
    try {
      for (int r = 0; r < world; ++r) threads.emplace_back([&shared, r] { rank_main(shared, r); });
    } catch (const std::system_error& e) {
      // The ranks already started wait for the others at the first barrier: release them, or
      // destroying their joinable threads would terminate the process.
      const std::string why = "run: could not start the thread of rank " +
                              std::to_string(threads.size()) + " of " + std::to_string(world) +
                              " (" + e.what() + "); run fewer ranks";
      abort_all(why);
      for (std::thread& t : threads) t.join();
      throw std::runtime_error(why);
    }
    for (std::thread& t : threads) t.join();
    watchdog.stop();
    traces::Timeline timeline = tracer.finish();
    if (watchdog.fired()) throw DeadlockError(watchdog.message());
    if (!shared.first_error.empty()) throw std::runtime_error(shared.first_error);
    RunResult result;
    result.timeline = std::move(timeline);
    result.backend = info.backend;
    gather_results(shared, result);
    return result;
  }
}

}  // namespace meshscope::exec
