// Progress lines for long runs: every `interval` a thread prints how far this process got, first
// while it makes the steps' data ("run: making the data of step 3 of 2000, 20 s"), then while its
// ranks run ("run: 41% (328000 of 800004 actions), step 1 of 2, 30 s"), so a run of minutes is
// seen to move. Runs shorter than one interval print nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "profiler/exec/progress.h"

namespace meshscope::exec {

class ProgressReport {
 public:
  // `progress`: one per rank of the mesh (only the local ranks' are read); `log` null: silent.
  ProgressReport(const std::vector<RankProgress>& progress, int steps, std::ostream* log,
                 std::chrono::milliseconds interval = std::chrono::seconds(10));
  ~ProgressReport();
  ProgressReport(const ProgressReport&) = delete;
  ProgressReport& operator=(const ProgressReport&) = delete;

  // While the data is made: `made` steps of it are done.
  void data_made(int made) { data_made_.store(made, std::memory_order_relaxed); }
  // The ranks start: `expected_ticks` is the sum of the local ranks' RankProgress::ticks once
  // the run is done.
  void start_ranks(const std::vector<int>& local_ranks, uint64_t expected_ticks);
  // Ends the thread (idempotent).
  void stop();
  // The line as it would print now (tests).
  std::string line(std::chrono::steady_clock::duration elapsed) const;

 private:
  void loop();

  const std::vector<RankProgress>& progress_;
  int steps_;
  std::ostream* log_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<int> data_made_{0};
  std::vector<int> local_;  // empty until start_ranks (guarded by mu_)
  uint64_t expected_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace meshscope::exec
