// The abort flag shared by every blocking call of a backend: set once, with the first reason.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "profiler/runtime/transport.h"

namespace meshscope::runtime {

class AbortState {
 public:
  bool aborted() const noexcept { return flag_.load(std::memory_order_acquire); }
  // Keeps the first reason; returns true if this call set the flag.
  bool set(const std::string& reason) noexcept {
    std::lock_guard lock(mu_);
    if (flag_.load(std::memory_order_relaxed)) return false;
    try {
      reason_ = reason;
    } catch (...) {
      // Out of memory while copying the reason: abort anyway, without it.
    }
    flag_.store(true, std::memory_order_release);
    return true;
  }
  std::string reason() const {
    std::lock_guard lock(mu_);
    return reason_;
  }
  [[noreturn]] void throw_aborted() const { throw Aborted(reason()); }

 private:
  mutable std::mutex mu_;
  std::string reason_;
  std::atomic<bool> flag_{false};
};

}  // namespace meshscope::runtime
