// The barrier the ranks meet at before each step (so step windows do not overlap); abortable like
// every other wait of a run. In a multi-process run the last local rank to arrive also meets the
// other processes (`across_processes`) before the local ranks are released.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "profiler/runtime/transport.h"

namespace meshscope::exec {

class StepBarrier {
 public:
  explicit StepBarrier(int parties, std::function<void()> across_processes = {})
      : parties_(parties), across_processes_(std::move(across_processes)) {}

  // Throws runtime::Aborted(reason) once abort() was called.
  void arrive_and_wait() {
    std::unique_lock lock(mu_);
    if (aborted_) throw runtime::Aborted(reason_);
    const uint64_t gen = generation_;
    if (++arrived_ == parties_) {
      if (across_processes_) {
        try {
          across_processes_();
        } catch (const std::exception& e) {
          if (!aborted_) reason_ = e.what();
          aborted_ = true;
          cv_.notify_all();
          throw;
        }
      }
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
    if (generation_ == gen) throw runtime::Aborted(reason_);
  }

  void abort(const std::string& reason) {
    {
      std::lock_guard lock(mu_);
      if (!aborted_) reason_ = reason;
      aborted_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int parties_;
  std::function<void()> across_processes_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  std::string reason_;
};

}  // namespace meshscope::exec
