// Progress polling and the deadlock message.
#include "profiler/exec/watchdog.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "traces/number_text.h"

namespace meshscope::exec {

std::chrono::nanoseconds watchdog_poll_interval(double timeout_s) {
  // Clamped in double before converting: a cast of a huge (or infinite) timeout to integer
  // nanoseconds would overflow.
  const double poll_s = std::clamp(timeout_s / 20, 1e-3, 0.1);
  return std::chrono::nanoseconds(static_cast<int64_t>(poll_s * 1e9));
}

Watchdog::Watchdog(const std::vector<RankProgress>& progress, double timeout_s,
                   std::function<std::string()> describe,
                   std::function<void(const std::string&)> abort, WatchdogHooks hooks)
    : progress_(progress),
      timeout_s_(timeout_s),
      describe_(std::move(describe)),
      abort_(std::move(abort)),
      hooks_(std::move(hooks)) {
  if (!(timeout_s > 0)) throw std::invalid_argument("watchdog: timeout must be > 0 seconds");
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() { stop(); }

void Watchdog::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Watchdog::fired() const {
  std::lock_guard lock(mu_);
  return fired_;
}

std::string Watchdog::message() const {
  std::lock_guard lock(mu_);
  return message_;
}

bool Watchdog::some_rank_computes() const {
  for (const RankProgress& p : progress_) {
    if (p.computing.load(std::memory_order_relaxed) && p.inner.load(std::memory_order_relaxed) < 0)
      return true;
  }
  return false;
}

uint64_t Watchdog::total_ticks() const {
  uint64_t t = 0;
  for (const RankProgress& p : progress_) t += p.ticks.load(std::memory_order_relaxed);
  return t;
}

void Watchdog::loop() {
  using Clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration<double>(timeout_s_);
  const auto poll = watchdog_poll_interval(timeout_s_);
  uint64_t last = total_ticks();
  auto last_change = Clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, poll);
    if (stop_) break;
    const uint64_t now_ticks = total_ticks();
    const auto now = Clock::now();
    const bool progressed =
        now_ticks != last || some_rank_computes() || (hooks_.working && hooks_.working());
    bool elsewhere = false;
    if (hooks_.share) {
      lock.unlock();  // the messenger's lock, not this one, guards what hooks_.share touches
      try {
        elsewhere = hooks_.share(progressed);
      } catch (const std::exception&) {
        // A link that fails here fails the run's own waits too, which say why.
      }
      lock.lock();
      if (stop_) break;
    }
    if (progressed || elsewhere) {
      last = now_ticks;
      last_change = now;
      continue;
    }
    if (now - last_change < timeout) continue;
    if (hooks_.over && hooks_.over()) continue;
    lock.unlock();
    std::string msg =
        "deadlock: no progress for " + traces::format_seconds(timeout_s_) + "; " + describe_();
    abort_(msg);
    lock.lock();
    fired_ = true;
    message_ = std::move(msg);
    break;
  }
}

}  // namespace meshscope::exec
