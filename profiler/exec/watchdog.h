// The watchdog: a thread that aborts the run when no rank has made progress for `timeout`
// seconds, with a message saying which rank waits on what, so a deadlock never hangs. A rank
// inside a compute action's math (RankProgress::computing) is progress, however long it takes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "profiler/exec/progress.h"

namespace meshscope::exec {

// What else the watchdog asks at every poll, each optional.
struct WatchdogHooks {
  // A multi-process run: called with whether this process's ranks progressed since the last
  // poll; returns whether another process's did, which counts as progress here too
  // (ProcessMessenger::send_heartbeat).
  std::function<bool(bool progressed)> share;
  // Whether the backend is doing work for blocked ranks (runtime::Backend::working): progress.
  std::function<bool()> working;
  // Whether every rank thread has returned: nothing is left to deadlock, so it never fires (a
  // run whose last tick came before a slow join had been reported as a deadlock of ranks that
  // had all finished).
  std::function<bool()> over;
};

class Watchdog {
 public:
  // describe() says where each rank stands (called once, when it fires); abort(message) must wake
  // every blocked rank. Both are called on the watchdog's thread, as the hooks are.
  Watchdog(const std::vector<RankProgress>& progress, double timeout_s,
           std::function<std::string()> describe, std::function<void(const std::string&)> abort,
           WatchdogHooks hooks = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Stops the thread (idempotent). After stop(), fired() and message() are stable.
  void stop();
  bool fired() const;
  std::string message() const;

 private:
  void loop();
  uint64_t total_ticks() const;
  bool some_rank_computes() const;

  const std::vector<RankProgress>& progress_;
  double timeout_s_;
  std::function<std::string()> describe_;
  std::function<void(const std::string&)> abort_;
  WatchdogHooks hooks_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool fired_ = false;
  std::string message_;
  std::thread thread_;
};

// How often the watchdog looks at the ranks: a 20th of the timeout (so it fires within ~5% of
// it), between 1 ms and 100 ms. Any timeout > 0 works, an infinite one included (never fires).
std::chrono::nanoseconds watchdog_poll_interval(double timeout_s);

}  // namespace meshscope::exec
