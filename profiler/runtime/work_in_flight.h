// Work a backend does for ranks that are blocked in it: a group's sum by its last member, each
// member's copy of the result, a receive's copy out of its message. No rank's action moves while
// it runs, but it is progress, as a compute action's math is: the watchdog asks (Backend::
// working) before it calls a run deadlocked. A 16 MB all-reduce of 4 ranks had been reported as a
// deadlock at --timeout 0.1 while its last member summed (found under ThreadSanitizer, stop 70).
#pragma once

#include <atomic>
#include <cstdint>

namespace meshscope::runtime {

class WorkInFlight {
 public:
  // Counts the work from construction to destruction.
  class Scope {
   public:
    explicit Scope(WorkInFlight& w) : w_(w) { w_.running_.fetch_add(1, std::memory_order_relaxed); }
    ~Scope() { w_.running_.fetch_sub(1, std::memory_order_relaxed); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    WorkInFlight& w_;
  };

  bool any() const noexcept { return running_.load(std::memory_order_relaxed) > 0; }

 private:
  std::atomic<int64_t> running_{0};
};

}  // namespace meshscope::runtime
