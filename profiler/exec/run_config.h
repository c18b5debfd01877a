// What a caller (the CLI's `run` and `demo`, tests, benchmarks) gives the executor and gets back.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/capture/tracer_factory.h"
#include "profiler/runtime/backend.h"
#include "sim/model/weights.h"
#include "sim/model/workload.h"
#include "sim/schedule/schedule.h"
#include "traces/timeline.h"

namespace meshscope::exec {

struct RunConfig {
  model::WorkloadSpec workload;  // model, sizes, global batch, learning rate, seed (moe: and ep)
  schedule::Schedule schedule;   // its mesh is the run's mesh (world = dp * pp * tp)
  runtime::BackendKind backend = runtime::BackendKind::kAuto;
  runtime::BackendOptions backend_options;  // mesh is overwritten: the schedule's, with ep
  capture::TracerKind tracer = capture::TracerKind::kAuto;
  int steps = 1;
  // Gather every dp replica's final weights (RunResult::replica_error); false: only replica 0's
  // and each expert's owner's, which is all a run that is not checked against one device needs.
  bool check_replicas = true;
  double timeout_s = 60;        // watchdog: abort after this long without progress
  std::ostream* log = nullptr;  // one line on the backend auto picked; null: silent
};

struct RunResult {
  traces::Timeline timeline;                  // devices, spans, flows, activation counter, steps
  std::vector<double> losses;                 // per step: the full-batch mean loss
  std::vector<model::LinearWeights> weights;  // after the last step, full matrices (dp replica 0)
  // The largest relative difference (equivalence.h) between another dp replica's final copy of a
  // weight and `weights`: replicas must end the step identical, and a replica that skipped its
  // update would otherwise go unseen (only replica 0's copy, and each expert's owner's, is
  // gathered into `weights`).
  double replica_error = 0;
  std::string backend;  // Backend::description()
  // The steps on the host clock: from the first rank released into step 0 to the last rank
  // done with its last step (set-up, weight download and building the Timeline left out, so
  // runs with different tracers compare).
  double wall_s = 0;
  int64_t actions = 0;  // actions executed, all ranks and steps
  // On the cpu backend in one process: per rank, per action of its program (Schedule::ranks), the
  // thread CPU time of the action's math (clock_gettime(CLOCK_THREAD_CPUTIME_ID) on the rank's
  // thread around the kernels or the copy; a blocked wait costs none), the mean over the steps
  // after the first (the only one when steps = 1). Empty on other backends and under mpirun.
  std::vector<std::vector<int64_t>> action_cpu_ns;
  // A multi-process run (one rank per process): process 0's result holds the whole run; the
  // others' hold only `backend`, `process` and `processes`.
  int process = 0;
  int processes = 1;
};

// The watchdog fired: what() is "deadlock: no progress for 5 s; rank 0 waits at action 3
// '0RECV_B0' (from rank 1); ...".
struct DeadlockError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A multi-process run failed and process 0 reports it: thrown on the other processes (what() is
// the same message process 0 throws as DeadlockError or std::runtime_error), so a launcher can
// print the failure once. Where process 0 itself fell silent, process 1 reports it instead.
struct FailureReportedByProcessZero : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace meshscope::exec
