// Framing ([channel: 1 byte][tag: 8 bytes][payload]), a stash of messages that arrived before
// anyone asked for them, and polling waits that watch the abort flag and a deadline.
#include "profiler/runtime/process_messenger.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "profiler/runtime/clock.h"

namespace meshscope::runtime {
namespace {

constexpr size_t kHeaderBytes = 1 + sizeof(int64_t);

std::string frame(ProcessMessenger::Channel channel, int64_t tag, const void* data, size_t bytes) {
  std::string out(kHeaderBytes + bytes, '\0');
  out[0] = static_cast<char>(channel);
  std::memcpy(out.data() + 1, &tag, sizeof tag);
  if (bytes > 0) std::memcpy(out.data() + kHeaderBytes, data, bytes);
  return out;
}

}  // namespace

ProcessMessenger::ProcessMessenger(std::unique_ptr<ProcessLink> link) : link_(std::move(link)) {
  if (!link_) throw std::invalid_argument("ProcessMessenger: no link");
  index_ = link_->index();
  size_ = link_->size();
  description_ = link_->describe();
  last_heard_ns_.assign(static_cast<size_t>(std::max(size_, 1)), 0);
}

void ProcessMessenger::send(int to, Channel channel, int64_t tag, const void* data, size_t bytes) {
  if (to < 0 || to >= size_) {
    throw std::runtime_error("process " + std::to_string(index_) + ": send to process " +
                             std::to_string(to) + ", outside [0, " + std::to_string(size_) + ")");
  }
  std::string message = frame(channel, tag, data, bytes);
  std::lock_guard lock(mu_);
  link_->post(to, std::move(message));
}

void ProcessMessenger::abort(const std::string& reason) noexcept { abort_.set(reason); }

bool ProcessMessenger::poll_abort() {
  std::lock_guard lock(mu_);
  pump_locked();
  return abort_.aborted();
}

void ProcessMessenger::send_heartbeat() {
  std::lock_guard lock(mu_);
  for (int p = 0; p < size_; ++p) {
    if (p != index_) link_->post(p, frame(Channel::kHeartbeat, 0, nullptr, 0));
  }
}

int64_t ProcessMessenger::take_heartbeats() {
  std::lock_guard lock(mu_);
  pump_locked();
  const int64_t n = heartbeats_;
  heartbeats_ = 0;
  return n;
}

void ProcessMessenger::notify_abort_locked() {
  if (abort_sent_ || !abort_.aborted()) return;
  abort_sent_ = true;
  const std::string reason = abort_.reason();
  for (int p = 0; p < size_; ++p) {
    if (p != index_) link_->post(p, frame(Channel::kAbort, 0, reason.data(), reason.size()));
  }
}

void ProcessMessenger::pump_locked() {
  notify_abort_locked();
  while (auto arrived = link_->poll()) {
    auto& [from, bytes] = *arrived;
    if (bytes.size() < kHeaderBytes ||
        static_cast<uint8_t>(bytes[0]) > static_cast<uint8_t>(Channel::kHeartbeat)) {
      throw std::runtime_error("process " + std::to_string(index_) +
                               ": malformed message from process " + std::to_string(from) + " (" +
                               std::to_string(bytes.size()) + " bytes)");
    }
    if (from >= 0 && from < size_) last_heard_ns_[static_cast<size_t>(from)] = host_now_ns();
    const auto channel = static_cast<uint8_t>(bytes[0]);
    int64_t tag = 0;
    std::memcpy(&tag, bytes.data() + 1, sizeof tag);
    bytes.erase(0, kHeaderBytes);
    if (channel == static_cast<uint8_t>(Channel::kHeartbeat)) {
      ++heartbeats_;
      continue;
    }
    if (channel == static_cast<uint8_t>(Channel::kAbort)) {
      // Another process told everyone; no need to echo it.
      abort_sent_ = true;
      abort_.set(bytes);
      continue;
    }
    stash_[{from, channel, tag}].push_back(std::move(bytes));
  }
}

ProcessMessenger::Unreceived ProcessMessenger::unreceived(Channel channel) {
  std::lock_guard lock(mu_);
  pump_locked();
  Unreceived out;
  for (const auto& [key, messages] : stash_) {
    if (std::get<1>(key) != static_cast<uint8_t>(channel) || messages.empty()) continue;
    if (out.count == 0) {
      out.from = std::get<0>(key);
      out.bytes = messages.front().size();
    }
    out.count += messages.size();
  }
  return out;
}

std::optional<std::string> ProcessMessenger::take_locked(const Key& key) {
  auto it = stash_.find(key);
  if (it == stash_.end()) return std::nullopt;
  std::string out = std::move(it->second.front());
  it->second.erase(it->second.begin());
  if (it->second.empty()) stash_.erase(it);
  return out;
}

std::string ProcessMessenger::wait_for(const Key& key, const std::string& what, int64_t deadline_ns,
                                       bool abortable, int64_t quiet_ns) {
  // Spin briefly (a peer usually answers within microseconds), then back off to sleeps of up to
  // 200 us so waiting ranks leave the cores to ranks that compute on an oversubscribed host.
  auto pause = std::chrono::microseconds(0);
  const auto from = static_cast<size_t>(std::get<0>(key));
  for (int round = 0;; ++round) {
    int64_t heard = 0;
    {
      std::lock_guard lock(mu_);
      pump_locked();
      if (auto got = take_locked(key)) return std::move(*got);
      if (abortable && abort_.aborted()) abort_.throw_aborted();
      heard = last_heard_ns_[from];
    }
    const int64_t now = deadline_ns > 0 ? host_now_ns() : 0;
    if (deadline_ns > 0 && now > deadline_ns && (quiet_ns <= 0 || now - heard > quiet_ns)) {
      {
        // A process that does not answer by a deadline may never reach its own end either: the
        // link must not wait for it when this one ends (ProcessLink::abandon).
        std::lock_guard lock(mu_);
        link_->abandon();
      }
      throw PeerSilentError("process " + std::to_string(index_) + ": gave up waiting for " + what +
                                " from process " + std::to_string(std::get<0>(key)),
                            std::get<0>(key));
    }
    if (round < 64) {
      std::this_thread::yield();
    } else {
      pause = std::min(std::chrono::microseconds(200), pause + std::chrono::microseconds(10));
      std::this_thread::sleep_for(pause);
    }
  }
}

std::string ProcessMessenger::receive(int from, Channel channel, int64_t tag,
                                      const std::string& what, int64_t deadline_ns) {
  if (from < 0 || from >= size_) {
    throw std::runtime_error("process " + std::to_string(index_) + ": receive from process " +
                             std::to_string(from) + ", outside [0, " + std::to_string(size_) + ")");
  }
  return wait_for({from, static_cast<uint8_t>(channel), tag}, what, deadline_ns, true);
}

std::vector<std::string> ProcessMessenger::all_gather(const std::vector<int>& members,
                                                      Channel channel, int64_t tag,
                                                      const std::string& mine,
                                                      const std::string& what,
                                                      int64_t deadline_ns) {
  std::vector<std::string> out(members.size());
  for (int m : members) {
    if (m != index_) send(m, channel, tag, mine.data(), mine.size());
  }
  for (size_t i = 0; i < members.size(); ++i) {
    out[i] = members[i] == index_ ? mine : receive(members[i], channel, tag, what, deadline_ns);
  }
  return out;
}

std::vector<std::string> ProcessMessenger::all_to_all(const std::vector<int>& members,
                                                      Channel channel, int64_t tag,
                                                      std::vector<std::string> mine,
                                                      const std::string& what) {
  std::vector<std::string> out(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    if (members[k] != index_) send(members[k], channel, tag, mine[k].data(), mine[k].size());
  }
  for (size_t i = 0; i < members.size(); ++i) {
    out[i] = members[i] == index_ ? std::move(mine[i]) : receive(members[i], channel, tag, what);
  }
  return out;
}

std::vector<std::string> ProcessMessenger::exchange(const std::string& mine,
                                                    const std::string& what, int64_t deadline_ns) {
  std::vector<int> all(size_);
  for (int p = 0; p < size_; ++p) all[p] = p;
  const int64_t tag = driver_sequence_++;
  return all_gather(all, Channel::kDriver, tag, mine, what, deadline_ns);
}

std::vector<std::string> ProcessMessenger::collect_ending(int64_t tag, const std::string& mine,
                                                          const std::string& what,
                                                          int64_t deadline_ns, int64_t quiet_ns) {
  std::vector<std::string> out(size_);
  for (int p = 0; p < size_; ++p) {
    out[p] = p == index_ ? mine
                         : wait_for({p, static_cast<uint8_t>(Channel::kEnding), tag}, what,
                                    deadline_ns, false, quiet_ns);
  }
  return out;
}

std::vector<std::string> ProcessMessenger::exchange_after_abort(const std::string& mine,
                                                                const std::string& what,
                                                                int64_t deadline_ns,
                                                                int64_t quiet_ns) {
  const int64_t tag = ending_sequence_++;
  for (int p = 0; p < size_; ++p) {
    if (p != index_) send(p, Channel::kEnding, tag, mine.data(), mine.size());
  }
  {
    std::lock_guard lock(mu_);
    notify_abort_locked();  // processes still inside their run must hear of an abort here
  }
  return collect_ending(tag, mine, what, deadline_ns, quiet_ns);
}

std::vector<std::string> ProcessMessenger::gather_after_abort(int root, const std::string& mine,
                                                              const std::string& what,
                                                              int64_t deadline_ns,
                                                              int64_t quiet_ns) {
  const int64_t tag = ending_sequence_++;
  if (index_ != root) {
    send(root, Channel::kEnding, tag, mine.data(), mine.size());
    return {};
  }
  return collect_ending(tag, mine, what, deadline_ns, quiet_ns);
}

}  // namespace meshscope::runtime
