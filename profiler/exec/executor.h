// The executor: runs a Schedule for k steps on a Backend with one host thread per rank, real
// tensors and real math, and returns the losses, the final weights and the Timeline.
#pragma once

#include <cstdint>

#include "profiler/capture/action_tracer.h"
#include "profiler/exec/run_config.h"
#include "profiler/runtime/backend.h"

namespace meshscope::exec {

// What a run may hold before it starts (the synthetic data of every step, a record per action and
// step), so an absurd step count fails at once, saying so, instead of exhausting memory.
inline constexpr int64_t kMaxRecordedActions = int64_t{1} << 26;
inline constexpr int64_t kMaxDataBytes = int64_t{4} << 30;

// Builds the backend (config.backend; auto says once what it picked on config.log) and the tracer,
// then runs. Throws std::invalid_argument for a config or schedule it cannot run (naming rank,
// action and why), DeadlockError when the watchdog fires, std::runtime_error when a rank fails
// (naming the rank and action). Never hangs: every wait is abortable and watched.
RunResult run(const RunConfig& config);

// Same on a backend and tracer the caller owns (tests, benchmarks, a GPU tracer). The backend's
// mesh must be run_mesh(schedule's, workload) (rank_plan.h): the schedule's with the moe
// workload's ep. A backend is good for one run: an aborted one stays aborted.
RunResult run(const RunConfig& config, runtime::Backend& backend, capture::ActionTracer& tracer);

// Samples per microbatch: batch / (dp * microbatches). Throws std::invalid_argument when the
// global batch does not split evenly.
int microbatch_rows(int batch, int dp, int microbatches);

}  // namespace meshscope::exec
