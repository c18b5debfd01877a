// Blocking point-to-point channels of the cpu backend.
#include "profiler/runtime/cpu_mailbox.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "profiler/runtime/clock.h"
#include "profiler/runtime/transport.h"

namespace meshscope::runtime {

CpuMailbox::CpuMailbox(int owner, const AbortState& abort, WorkInFlight& work)
    : owner_(owner), abort_(abort), work_(work) {
  pending_.reserve(64);
  pool_.reserve(64);
}

int64_t CpuMailbox::post(int src, int64_t tag, const void* data, size_t bytes) {
  std::vector<std::byte> buffer;
  {
    std::lock_guard lock(mu_);
    if (!pool_.empty()) {
      buffer = std::move(pool_.back());
      pool_.pop_back();
    }
  }
  {
    const WorkInFlight::Scope copying(work_);
    buffer.resize(bytes);  // reuses the pooled capacity: no allocation once warm
    if (bytes > 0) std::memcpy(buffer.data(), data, bytes);
  }
  const int64_t queued_ns = host_now_ns();
  {
    std::lock_guard lock(mu_);
    pending_.push_back(Message{src, tag, queued_ns, std::move(buffer)});
  }
  cv_.notify_all();
  return queued_ns;
}

TransferInfo CpuMailbox::take(int src, int64_t tag, void* dst, size_t bytes) {
  Message msg;
  {
    std::unique_lock lock(mu_);
    // Checked first, not only before waiting: after an abort every call throws (transport.h),
    // so a rank whose messages happen to be queued stops at once instead of running on.
    if (abort_.aborted()) abort_.throw_aborted();
    auto match = [&] {
      return std::find_if(pending_.begin(), pending_.end(),
                          [&](const Message& m) { return m.src == src && m.tag == tag; });
    };
    auto it = match();
    while (it == pending_.end()) {
      cv_.wait(lock);
      if (abort_.aborted()) abort_.throw_aborted();
      it = match();
    }
    msg = std::move(*it);
    pending_.erase(it);
  }
  // The copy starts now: the time before (the wait, including the wake-up) is idle.
  msg.ready_ns = std::max(msg.ready_ns, host_now_ns());
  const size_t got = msg.data.size();
  if (got == bytes && bytes > 0) {
    const WorkInFlight::Scope copying(work_);
    std::memcpy(dst, msg.data.data(), bytes);
  }
  {
    std::lock_guard lock(mu_);
    pool_.push_back(std::move(msg.data));
  }
  if (got != bytes) {
    throw std::runtime_error("recv on rank " + std::to_string(owner_) + " from rank " +
                             std::to_string(src) + " (tag " + std::to_string(tag) + "): expected " +
                             std::to_string(bytes) + " bytes, the send carried " +
                             std::to_string(got));
  }
  return TransferInfo{msg.ready_ns};
}

void CpuMailbox::wake() {
  std::lock_guard lock(mu_);  // so a waiter between its flag check and wait() cannot miss it
  cv_.notify_all();
}

std::string CpuMailbox::undelivered() {
  std::lock_guard lock(mu_);
  if (pending_.empty()) return "";
  const Message& first = pending_.front();
  return Transport::undelivered_text(pending_.size(), first.src, first.data.size());
}

}  // namespace meshscope::runtime
