// The robust bubble statistic: per-window analysis, fastest quarter, median.
#include "profiler/exec/bubble_probe.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/exec/executor.h"
#include "traces/analysis.h"

namespace meshscope::exec {

BubbleMeasurement measure_bubble(const RunConfig& config, int runs) {
  if (config.steps < 2 || runs < 1 || runs * (config.steps - 1) < 4) {
    throw std::invalid_argument("measure_bubble: needs at least 4 step windows after warm-up (" +
                                std::to_string(runs) + " runs of " + std::to_string(config.steps) +
                                " steps give fewer)");
  }
  struct Sample {
    int64_t step_ns;
    double bubble;
  };
  std::vector<Sample> samples;
  for (int run_index = 0; run_index < runs; ++run_index) {
    RunResult r = run(config);
    const std::vector<traces::StepWindow> windows = r.timeline.steps;
    for (size_t w = 1; w < windows.size(); ++w) {
      r.timeline.steps = {windows[w]};
      const traces::TimelineAnalysis a = traces::analyze(r.timeline);
      samples.push_back({a.step_time_ns, a.bubble_fraction});
    }
  }
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.step_ns < b.step_ns; });
  BubbleMeasurement m;
  m.windows = static_cast<int>(samples.size());
  samples.resize(samples.size() / 4);
  m.step_ns = samples[samples.size() / 2].step_ns;
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.bubble < b.bubble; });
  m.bubble_fraction = samples[samples.size() / 2].bubble;
  return m;
}

}  // namespace meshscope::exec
