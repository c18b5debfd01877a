// Mailboxes and rendezvous rounds for cuda-virtual; every wait ends on abort.
#include "profiler/runtime/cuda/virtual_fabric.h"

#include <utility>

namespace meshscope::runtime::cuda {

void Mailboxes::post(int src, int dst, int64_t tag, Message m) {
  {
    std::lock_guard lock(mu_);
    queues_[{src, dst, tag}].push_back(m);
  }
  cv_.notify_all();
}

Message Mailboxes::take(int src, int dst, int64_t tag) {
  std::unique_lock lock(mu_);
  const auto key = std::make_tuple(src, dst, tag);
  cv_.wait(lock, [&] {
    if (abort_.aborted()) return true;
    auto it = queues_.find(key);
    return it != queues_.end() && !it->second.empty();
  });
  if (abort_.aborted()) abort_.throw_aborted();
  auto it = queues_.find(key);
  Message m = it->second.front();
  it->second.pop_front();
  return m;
}

void Mailboxes::wake_all() {
  { std::lock_guard lock(mu_); }
  cv_.notify_all();
}

void Mailboxes::give_back(int owner, cudaEvent_t event) {
  if (event == nullptr) return;
  std::lock_guard lock(mu_);
  returned_[owner].push_back(event);
}

std::vector<cudaEvent_t> Mailboxes::take_back(int owner) {
  std::lock_guard lock(mu_);
  std::vector<cudaEvent_t> out;
  auto it = returned_.find(owner);
  if (it != returned_.end()) out.swap(it->second);
  return out;
}

std::vector<Message> Mailboxes::drain() {
  std::lock_guard lock(mu_);
  std::vector<Message> left;
  for (auto& [key, q] : queues_) {
    for (Message& m : q) {
      if (m.ready != nullptr)
        returned_[std::get<0>(key)].push_back(std::exchange(m.ready, nullptr));
      left.push_back(m);
    }
  }
  queues_.clear();
  return left;
}

Rendezvous::Rendezvous(int size, const AbortState& abort) : size_(size), abort_(abort) {
  slots_[0].resize(size);
  slots_[1].resize(size);
}

std::vector<Contribution> Rendezvous::exchange(int member, const Contribution& mine) {
  std::unique_lock lock(mu_);
  if (abort_.aborted()) abort_.throw_aborted();
  const uint64_t round = round_;
  std::vector<Contribution>& slots = slots_[round & 1];
  slots[member] = mine;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++round_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return round_ != round || abort_.aborted(); });
    if (round_ == round) abort_.throw_aborted();
  }
  return slots;
}

void Rendezvous::wake_all() {
  { std::lock_guard lock(mu_); }
  cv_.notify_all();
}

}  // namespace meshscope::runtime::cuda
