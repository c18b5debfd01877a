// A worker thread that computes one request at a time for the UI (the what-if panel's
// re-simulation): submitting replaces any request still waiting, so the UI never queues stale
// work, and results are collected with poll() on the UI thread without blocking it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace meshscope::gui {

template <typename Request, typename Result>
class LatestJob {
 public:
  // What poll() hands back: the result of request `id`, or the message of what it threw.
  struct Outcome {
    uint64_t id = 0;
    std::optional<Result> value;
    std::string error;
  };

  explicit LatestJob(std::function<Result(const Request&)> compute)
      : compute_(std::move(compute)), worker_([this](std::stop_token stop) { loop(stop); }) {}
  // The jthread member asks the worker to stop and joins it (after a running request finishes).
  ~LatestJob() = default;
  LatestJob(const LatestJob&) = delete;
  LatestJob& operator=(const LatestJob&) = delete;

  // Queues `request`, dropping one that has not started; returns its id (increasing).
  uint64_t submit(Request request) {
    std::lock_guard lock(mutex_);
    pending_ = std::move(request);
    const uint64_t id = ++last_id_;
    pending_id_ = id;
    wake_.notify_all();
    return id;
  }

  // The newest finished outcome not yet collected, if any.
  std::optional<Outcome> poll() {
    std::lock_guard lock(mutex_);
    return std::exchange(done_, std::nullopt);
  }

  // True while a request waits or runs.
  bool busy() const {
    std::lock_guard lock(mutex_);
    return pending_.has_value() || running_;
  }

 private:
  void loop(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    while (true) {
      // The stop_token overload wakes on request_stop() too, without a lost-wakeup window.
      if (!wake_.wait(lock, stop, [&] { return pending_.has_value(); })) return;
      Request request = std::move(*pending_);
      pending_.reset();
      const uint64_t id = pending_id_;
      running_ = true;
      lock.unlock();
      Outcome outcome;
      outcome.id = id;
      try {
        outcome.value.emplace(compute_(request));
      } catch (const std::exception& e) {
        outcome.error = e.what();
      }
      lock.lock();
      running_ = false;
      done_ = std::move(outcome);
    }
  }

  std::function<Result(const Request&)> compute_;
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::optional<Request> pending_;
  uint64_t pending_id_ = 0;
  uint64_t last_id_ = 0;
  bool running_ = false;
  std::optional<Outcome> done_;
  std::jthread worker_;  // last: starts after the members it uses exist, stops first
};

}  // namespace meshscope::gui
