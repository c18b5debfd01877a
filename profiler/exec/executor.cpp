// The driver: checks the config, compiles plans, starts a thread per rank under the watchdog,
// gathers losses, weights and the Timeline.
#include "profiler/exec/executor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "profiler/exec/process_run.h"
#include "profiler/exec/progress.h"
#include "profiler/exec/progress_report.h"
#include "profiler/exec/rank_plan.h"
#include "profiler/exec/rank_worker.h"
#include "profiler/exec/step_barrier.h"
#include "profiler/exec/watchdog.h"
#include "profiler/runtime/clock.h"
#include "sim/model/data.h"
#include "sim/model/workload_cost.h"
#include "sim/schedule/schedule_descriptor.h"

namespace meshscope::exec {
namespace {

void check_schedule(const schedule::Schedule& s, const mesh::Mesh& m, const model::Workload& w) {
  auto bad = [](const std::string& why) { throw std::invalid_argument("run: " + why); };
  mesh::MeshShape schedule_mesh = m.shape();
  schedule_mesh.ep = s.mesh.ep;  // the backend's carries the workload's (run_mesh)
  if (!(s.mesh == schedule_mesh)) {
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
  const int64_t per_sample =
      w.loss == model::LossKind::kMse ? w.input_dim + w.output_dim : w.input_dim + 1;
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

// The run as typed facts for the Timeline (traces/run_descriptor.h).
traces::RunDescriptor describe_run(const model::Workload& w, const schedule::Schedule& s,
                                   const runtime::Backend& backend) {
  traces::RunDescriptor run;
  run.source =
      traces::parse_run_source(runtime::name(backend.kind())).value_or(traces::RunSource::kUnknown);
  run.backend = backend.description();
  schedule::describe_schedule(s, run);
  run.workload.kind =
      traces::parse_model_kind(model::name(w.spec.kind)).value_or(traces::ModelKind::kUnknown);
  if (w.spec.kind == model::WorkloadKind::kMlp || w.spec.kind == model::WorkloadKind::kMoe) {
    run.workload.layers = w.spec.layers;
    run.workload.hidden = w.spec.hidden;
  }
  if (w.spec.kind == model::WorkloadKind::kMoe) {
    run.workload.experts = w.spec.experts;
    run.workload.top_k = w.spec.top_k;
    run.workload.capacity_factor = w.spec.capacity_factor;
    run.workload.ep = w.spec.ep;
  }
  run.workload.batch = w.spec.batch;
  return run;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// After the local ranks stopped: every process learns how every other ended; on success the
// parts go to process 0, which returns the whole run; the others return their own part.
RunResult finish_across_processes(SharedRun& shared, const RunConfig& config,
                                  runtime::ProcessMessenger& processes,
                                  const std::vector<int>& local, const Watchdog& watchdog,
                                  traces::Timeline timeline, const std::string& backend) {
  using Outcome = ProcessReport::Outcome;
  ProcessReport mine;
  mine.host = host_name();
  if (!shared.first_error.empty()) {  // a rank's own failure first, as run() says it
    mine.outcome = Outcome::kFailed;
    mine.message = shared.first_error;
  } else if (watchdog.fired()) {
    mine.outcome = Outcome::kDeadlock;
    mine.message = watchdog.message();
  } else if (processes.aborted()) {
    mine.outcome = Outcome::kAborted;
    mine.message = processes.abort_state().reason();
  }
  if (mine.outcome != Outcome::kOk) mine.where = describe_ranks(shared);
  // Another process may still be inside its last step: wait up to the watchdog's timeout, and
  // at least 5 s (assumption: enough for a process still setting up its ranks to be told), so a
  // tiny --timeout gives the one combined message rather than each process giving up on another.
  // A process whose ranks still compute sends heartbeats: it is waited for as long as it does
  // (a last backward longer than the wait, a loaded host), until it has been silent that long.
  const int64_t started = runtime::host_now_ns();
  const int64_t quiet = static_cast<int64_t>(std::clamp(config.timeout_s, 5.0, 1e6) * 1e9);
  const int64_t deadline = started + quiet;
  std::vector<std::string> exchanged;
  try {
    exchanged = processes.exchange_after_abort(encode_report(mine), "how its part of the run ended",
                                               deadline, quiet);
  } catch (const runtime::PeerSilentError& e) {
    // Said once, by process 0 (by process 1 when process 0 is the silent one), with what this
    // process's own watchdog saw.
    std::string message =
        "process " + std::to_string(e.peer()) + " did not say how its part of the run ended " +
        "and was silent for " + std::to_string(static_cast<int64_t>(quiet / 1'000'000'000)) +
        " s: it was stopped (a signal, a debugger) or is stuck outside the schedule";
    if (mine.outcome != Outcome::kOk)
      message += "; process " + std::to_string(processes.index()) + ": " + mine.message;
    if (processes.index() != (e.peer() == 0 ? 1 : 0)) throw FailureReportedByProcessZero(message);
    throw std::runtime_error(message);
  }
  std::vector<ProcessReport> reports;
  for (const std::string& bytes : exchanged) reports.push_back(decode_report(bytes));
  bool deadlock = false;
  const std::string error = combine_reports(reports, deadlock);
  if (!error.empty() && processes.index() != 0) throw FailureReportedByProcessZero(error);
  if (deadlock) throw DeadlockError(error);
  if (!error.empty()) throw std::runtime_error(error);

  ProcessPart part;
  part.ranks = local;
  for (int r : local) part.results.push_back(shared.results[r]);
  part.timeline = std::move(timeline);
  part.host = mine.host;
  RunResult result;
  result.backend = backend;
  result.process = processes.index();
  result.processes = processes.size();
  const auto all =
      processes.gather_after_abort(0, processes.index() == 0 ? std::string() : encode_part(part),
                                   "its rank's results", deadline, quiet);
  if (processes.index() != 0) return result;
  std::vector<ProcessPart> parts;
  parts.push_back(std::move(part));
  for (size_t p = 1; p < all.size(); ++p) parts.push_back(decode_part(all[p]));
  result.timeline = merge_parts(parts);
  result.timeline.metadata["processes"] = std::to_string(processes.size());
  for (const ProcessPart& p : parts) {
    for (size_t i = 0; i < p.ranks.size(); ++i) shared.results[p.ranks[i]] = p.results[i];
  }
  gather_results(shared, result);
  return result;
}

}  // namespace

int microbatch_rows(int batch, int dp, int microbatches) {
  return model::microbatch_rows(batch, dp, microbatches);
}

RunResult run(const RunConfig& config) {
  runtime::BackendOptions options = config.backend_options;
  options.mesh = run_mesh(config.schedule.mesh, config.workload);
  if (options.log == nullptr) options.log = config.log;
  capture::prepare_tracer(config.tracer, config.backend);  // before any CUDA or NCCL thread
  auto backend = runtime::make_backend(config.backend, options);
  auto tracer = capture::make_tracer(config.tracer, *backend);
  return run(config, *backend, *tracer);
}

RunResult run(const RunConfig& config, runtime::Backend& backend, capture::ActionTracer& tracer) {
  if (config.steps < 1) throw std::invalid_argument("run: steps must be >= 1");
  if (!(config.timeout_s > 0)) throw std::invalid_argument("run: timeout must be > 0 seconds");
  const mesh::Mesh& mesh = backend.mesh();
  const int world = mesh.size();
  runtime::ProcessMessenger* processes = backend.processes();
  std::vector<int> local;  // the ranks that run in this process
  for (int r = 0; r < world; ++r) {
    if (backend.hosts(r)) local.push_back(r);
  }
  if (local.empty()) throw std::invalid_argument("run: this process hosts none of the ranks");

  SharedRun shared;
  shared.backend = &backend;
  shared.tracer = &tracer;
  shared.steps = config.steps;
  shared.check_replicas = config.check_replicas;
  std::vector<RankProgress> progress(static_cast<size_t>(world));
  shared.progress = &progress;
  std::function<void()> across_processes;
  if (processes != nullptr) {
    across_processes = [processes] { processes->exchange("", "the barrier before a step"); };
  }
  StepBarrier barrier(static_cast<int>(local.size()), across_processes);
  shared.barrier = &barrier;
  auto abort_all = [&](const std::string& reason) {
    backend.abort(reason);
    barrier.abort(reason);
  };
  shared.abort = abort_all;

  // Under mpirun each process watches its own rank: a heartbeat to the others when it progresses
  // (at most four a timeout) keeps a peer's watchdog from taking a long compute here for a stall.
  std::function<bool(bool)> share;
  if (processes != nullptr) {
    const auto every = std::chrono::duration<double>(config.timeout_s / 4);
    share = [processes, every,
             sent = std::chrono::steady_clock::time_point{}](bool progressed) mutable {
      const auto now = std::chrono::steady_clock::now();
      if (progressed && now - sent >= every) {
        processes->send_heartbeat();
        sent = now;
      }
      return processes->take_heartbeats() > 0;
    };
  }
  // A rank whose thread has not reached its set-up yet is setting up: progress, as set-up is
  // (rank_main clears the flag once its set-up is done). A --timeout of a millisecond had fired
  // while every rank was still starting. The watchdog starts before this process makes the
  // weights, the batches and the plans: under mpirun its heartbeats tell a process already at the
  // first barrier that this one is preparing, not stalled. Started after them, a process that
  // prepared a little late (a loaded host) was taken for a deadlock by its peer (1 run in 4 at
  // --timeout 0.2 with two busy loops beside the two processes, 2026-12-07).
  for (int r : local) progress[static_cast<size_t>(r)].computing.store(true);
  // The watchdog's thread starts before `shared` is filled in: it may read it only once
  // published (release below, acquire here).
  std::atomic<bool> published{false};
  std::atomic<size_t> running{local.size()};  // rank threads not yet returned
  Watchdog watchdog(progress, config.timeout_s,
                    [&] {
                      return published.load(std::memory_order_acquire)
                                 ? describe_ranks(shared)
                                 : std::string("the run is being set up");
                    },
                    abort_all,
                    {.share = share,
                     .working = [&backend] { return backend.working(); },
                     .over = [&running] { return running.load(std::memory_order_acquire) == 0; }});

  const model::Workload workload = model::make_workload(config.workload);
  const schedule::Schedule& sched = config.schedule;
  check_schedule(sched, mesh, workload);
  check_size(sched, workload, config.steps);
  model::check_tp(workload, mesh.shape().tp);
  const int rows = microbatch_rows(workload.spec.batch, mesh.shape().dp, sched.num_microbatches);
  const auto partition =
      model::partition_units(static_cast<int>(workload.units.size()), sched.num_stages);
  const auto costs = model::stage_costs(workload, partition, mesh.shape().tp, rows);

  shared.workload = &workload;
  shared.schedule = &sched;
  shared.rows = rows;
  shared.initial = model::init_weights(workload);
  // Progress lines from here on: making a huge batch can take minutes before any rank runs.
  ProgressReport report(progress, config.steps, config.log);
  for (int s = 0; s < config.steps; ++s) {
    shared.batches.push_back(model::make_batch(workload, s));
    report.data_made(s + 1);
  }
  shared.plans = make_plans(workload, sched, mesh, partition, costs, rows);
  std::vector<std::vector<capture::ActionInfo>> programs;
  std::vector<std::vector<capture::InnerInfo>> inner;
  for (RankPlan& p : shared.plans) {
    programs.push_back(p.infos);
    inner.push_back(p.inner);
  }
  shared.programs = &programs;
  shared.inner = &inner;
  shared.results.resize(world);
  published.store(true, std::memory_order_release);

  capture::RunInfo info;
  info.mesh = &mesh;
  info.schedule = &sched;
  info.steps = config.steps;
  info.backend = backend.description();
  info.run = describe_run(workload, sched, backend);
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

  // Every tick a rank bumps: one per stage set up, per action, per step barrier, and at the end.
  uint64_t expected_ticks = 0;
  for (int r : local) {
    const RankPlan& p = shared.plans[static_cast<size_t>(r)];
    expected_ticks +=
        p.stages.size() + 1 + static_cast<uint64_t>(config.steps) * (p.actions.size() + 1);
  }
  report.start_ranks(local, expected_ticks);
  std::vector<std::thread> threads;
  threads.reserve(local.size());
  try {
    for (int r : local) {
      threads.emplace_back([&shared, &running, r] {
        rank_main(shared, r);
        running.fetch_sub(1, std::memory_order_release);
      });
    }
  } catch (const std::system_error& e) {
    // The ranks already started wait for the others at the first barrier: release them, or
    // destroying their joinable threads would terminate the process.
    const std::string why = "run: could not start the thread of rank " +
                            std::to_string(local[threads.size()]) + " of " + std::to_string(world) +
                            " (" + e.what() +
                            "): a limit on threads (ulimit -u) or on memory (ulimit -v, a "
                            "thread's stack) was reached; run fewer ranks or raise it";
    abort_all(why);
    for (std::thread& t : threads) t.join();
    throw std::runtime_error(why);
  }
  for (std::thread& t : threads) t.join();
  report.stop();
  watchdog.stop();
  traces::Timeline timeline = tracer.finish();
  if (processes != nullptr) {
    return finish_across_processes(shared, config, *processes, local, watchdog, std::move(timeline),
                                   info.backend);
  }
  // A rank's own failure first: the watchdog may have fired while the others were being woken
  // by it (aborts are not first_error).
  if (!shared.first_error.empty()) throw std::runtime_error(shared.first_error);
  if (watchdog.fired()) throw DeadlockError(watchdog.message());
  RunResult result;
  result.timeline = std::move(timeline);
  result.backend = info.backend;
  gather_results(shared, result);
  return result;
}

}  // namespace meshscope::exec
