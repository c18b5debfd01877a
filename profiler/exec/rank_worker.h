// The per-rank side of a run: the state the driver shares with the rank threads, the thread body,
// the watchdog's description of where each rank stands, and gathering the results.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "profiler/exec/progress.h"
#include "profiler/exec/rank_plan.h"
#include "profiler/exec/run_config.h"
#include "profiler/exec/step_barrier.h"
#include "profiler/runtime/backend.h"
#include "sim/model/data.h"
#include "sim/model/weights.h"

namespace meshscope::exec {

struct RankResult {
  int64_t steps_begin_ns = 0;  // host clock: released from the first step's barrier
  int64_t steps_end_ns = 0;    // host clock: its last step's work finished (synchronised)
  std::vector<double> losses;  // per step: this rank's loss sum (meaningful on last-stage ranks)
  // Per local stage, on dp replicas below ep (dp 0 alone without expert parallelism).
  std::vector<std::vector<model::LinearWeights>> stage_weights;
  int64_t actions = 0;
  // Per action of its program: thread CPU time summed over the steps that count (run_config.h's
  // RunResult::action_cpu_ns); empty unless the backend is cpu.
  std::vector<int64_t> action_cpu_ns;
  int cpu_steps = 0;  // how many steps action_cpu_ns sums
};

struct SharedRun {
  const model::Workload* workload = nullptr;
  const schedule::Schedule* schedule = nullptr;
  runtime::Backend* backend = nullptr;
  capture::ActionTracer* tracer = nullptr;
  int steps = 0;
  bool check_replicas = true;  // RunConfig::check_replicas
  int rows = 0;
  std::vector<model::LinearWeights> initial;
  std::vector<model::Batch> batches;
  std::vector<RankPlan> plans;
  const std::vector<std::vector<capture::ActionInfo>>* programs = nullptr;
  const std::vector<std::vector<capture::InnerInfo>>* inner = nullptr;
  std::vector<RankProgress>* progress = nullptr;
  StepBarrier* barrier = nullptr;
  std::function<void(const std::string&)> abort;
  std::vector<RankResult> results;
  std::mutex error_mu;
  std::string first_error;  // the first failure that was not an abort
};

// The body of rank r's thread. Never throws: failures are recorded in shared.first_error and abort
// the run so every other rank wakes up.
void rank_main(SharedRun& shared, int rank);

// "rank 0 waits at action 3 '0RECV_B0' (from rank 1); rank 1 waits at action 2 '1RECV_F1' (from
// rank 0)": one clause per rank, for the watchdog.
std::string describe_ranks(const SharedRun& shared);

// Losses summed over dp replicas, weights reassembled from the tp shards of dp replica 0 and the
// expert shards of the ep ranks.
void gather_results(const SharedRun& shared, RunResult& result);

}  // namespace meshscope::exec
