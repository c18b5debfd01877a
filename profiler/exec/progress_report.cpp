// ProgressReport: a periodic line from the data preparation and the ranks' progress counters.
#include "profiler/exec/progress_report.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace meshscope::exec {

ProgressReport::ProgressReport(const std::vector<RankProgress>& progress, int steps,
                               std::ostream* log, std::chrono::milliseconds interval)
    : progress_(progress), steps_(steps), log_(log), interval_(interval) {
  if (log_ != nullptr) thread_ = std::thread([this] { loop(); });
}

ProgressReport::~ProgressReport() { stop(); }

void ProgressReport::start_ranks(const std::vector<int>& local_ranks, uint64_t expected_ticks) {
  std::lock_guard lock(mu_);
  local_ = local_ranks;
  expected_ = std::max<uint64_t>(expected_ticks, 1);
}

void ProgressReport::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string ProgressReport::line(std::chrono::steady_clock::duration elapsed) const {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  char buf[160];
  if (local_.empty()) {
    std::snprintf(buf, sizeof buf, "run: making the data of step %d of %d, %.0f s",
                  std::min(data_made_.load(std::memory_order_relaxed) + 1, steps_), steps_,
                  seconds);
    return buf;
  }
  uint64_t ticks = 0;
  int step = steps_;  // the step the slowest rank is in
  for (int r : local_) {
    const RankProgress& p = progress_[static_cast<size_t>(r)];
    ticks += p.ticks.load(std::memory_order_relaxed);
    if (p.state.load(std::memory_order_relaxed) != RankState::kDone)
      step = std::min(step, std::max(0, p.step.load(std::memory_order_relaxed)));
  }
  ticks = std::min(ticks, expected_);
  // Under mpirun this process sees only its own rank: say whose progress it is.
  char whose[48] = "";
  if (local_.size() == 1 && progress_.size() > 1)
    std::snprintf(whose, sizeof whose, " rank %d of %zu", local_.front(), progress_.size());
  std::snprintf(buf, sizeof buf, "run%s: %.0f%% (%llu of %llu actions), step %d of %d, %.0f s",
                whose, 100.0 * static_cast<double>(ticks) / static_cast<double>(expected_),
                static_cast<unsigned long long>(ticks), static_cast<unsigned long long>(expected_),
                std::min(step + 1, steps_), steps_, seconds);
  return buf;
}

void ProgressReport::loop() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    *log_ << line(std::chrono::steady_clock::now() - start_) << std::endl;
  }
}

}  // namespace meshscope::exec
