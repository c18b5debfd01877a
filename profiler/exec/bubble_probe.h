// Measuring a schedule's bubble fraction on the cpu backend so that it means the schedule, not
// the host: several runs, every step window after each run's first analysed on its own, and the
// median bubble of the quarter of windows with the shortest step (a rank preempted by another
// process stretches its spans and makes its peers wait; preemption only ever adds time, so the
// shortest windows are the least disturbed). Used by the bubble test and bench/exec_bubble_bench.
#pragma once

#include <cstdint>

#include "profiler/exec/run_config.h"

namespace meshscope::exec {

struct BubbleMeasurement {
  double bubble_fraction = 0;  // overall (all devices), median of the fastest quarter
  int64_t step_ns = 0;         // median step time of that quarter
  int windows = 0;             // step windows analysed, over all runs
};

// Runs `config` `runs` times (config.steps >= 2: each run's first step is dropped as warm-up).
// Throws std::invalid_argument when fewer than 4 windows would be analysed, and what exec::run
// throws.
BubbleMeasurement measure_bubble(const RunConfig& config, int runs);

}  // namespace meshscope::exec
