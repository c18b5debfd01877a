// Progress lines for long runs: every `interval` a thread prints how far the ranks of this process
// got ("run: 41% (328,000 of 800,004 actions), step 1 of 2, 20 s"), so a run of minutes is seen to
// move. Runs shorter than one interval print nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <thread>
#include <vector>

#include "profiler/exec/progress.h"

namespace meshscope::exec {

class ProgressReport {
 public:
  // `expected_ticks`: the sum of RankProgress::ticks of the local ranks once the run is done.
  ProgressReport(const std::vector<RankProgress>& progress, const std::vector<int>& local_ranks,
                 uint64_t expected_ticks, int steps, std::ostream* log,
                 std::chrono::milliseconds interval = std::chrono::seconds(10));
  ~ProgressReport();
  ProgressReport(const ProgressReport&) = delete;
  ProgressReport& operator=(const ProgressReport&) = delete;

  // Ends the thread (idempotent).
  void stop();
  // The line as it would print now (tests).
  std::string line(std::chrono::steady_clock::duration elapsed) const;

 private:
  void loop();

  const std::vector<RankProgress>& progress_;
  std::vector<int> local_;
  uint64_t expected_;
  int steps_;
  std::ostream* log_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace meshscope::exec
