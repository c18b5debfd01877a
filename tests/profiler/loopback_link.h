// ProcessLinks between threads of one test process: each "process" of a multi-process run is a
// thread with its own link, messenger, backend and tracer, as mpirun would give each process.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/runtime/process_link.h"

namespace meshscope::runtime::testing {

class LoopbackHub {
 public:
  explicit LoopbackHub(int size) : queues_(size) {}
  int size() const { return static_cast<int>(queues_.size()); }
  void post(int from, int to, std::string bytes) {
    std::lock_guard lock(mu_);
    queues_[to].emplace_back(from, std::move(bytes));
  }
  std::optional<std::pair<int, std::string>> poll(int self) {
    std::lock_guard lock(mu_);
    if (queues_[self].empty()) return std::nullopt;
    auto m = std::move(queues_[self].front());
    queues_[self].pop_front();
    return m;
  }

 private:
  std::mutex mu_;
  std::vector<std::deque<std::pair<int, std::string>>> queues_;
};

class LoopbackLink final : public ProcessLink {
 public:
  LoopbackLink(std::shared_ptr<LoopbackHub> hub, int index) : hub_(std::move(hub)), index_(index) {}
  int index() const override { return index_; }
  int size() const override { return hub_->size(); }
  void post(int to, std::string bytes) override { hub_->post(index_, to, std::move(bytes)); }
  std::optional<std::pair<int, std::string>> poll() override { return hub_->poll(index_); }
  std::string describe() const override {
    return "loopback, " + std::to_string(size()) + " processes";
  }

 private:
  std::shared_ptr<LoopbackHub> hub_;
  int index_;
};

}  // namespace meshscope::runtime::testing
