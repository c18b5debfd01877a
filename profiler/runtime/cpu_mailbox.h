// The receive side of one rank on the cpu backend: messages posted by senders (copied, so a send
// never waits) and taken by the owner in (source, tag) FIFO order; buffers are pooled so the steady
// state allocates nothing.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/transport.h"
#include "profiler/runtime/work_in_flight.h"

namespace meshscope::runtime {

class CpuMailbox {
 public:
  // `work` counts its copies of a message in and out (the watchdog's progress).
  CpuMailbox(int owner, const AbortState& abort, WorkInFlight& work);

  // Copies `bytes` from `data` into a pooled buffer and queues it; called by the sender's thread.
  // Returns when the message was queued, before the owner was woken (host clock).
  int64_t post(int src, int64_t tag, const void* data, size_t bytes);
  // Blocks until a message from `src` with `tag` is queued (or the backend aborts), then copies it
  // into `dst`. Throws std::runtime_error when its size is not `bytes`, Aborted on abort.
  TransferInfo take(int src, int64_t tag, void* dst, size_t bytes);
  // Wakes a blocked take() so it can observe the abort flag.
  void wake();
  // The messages queued and never taken (Transport::undelivered): "" when none.
  std::string undelivered();

 private:
  struct Message {
    int src = 0;
    int64_t tag = 0;
    int64_t ready_ns = 0;
    std::vector<std::byte> data;
  };

  int owner_;
  const AbortState& abort_;
  WorkInFlight& work_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Message> pending_;  // in post order
  std::vector<std::vector<std::byte>> pool_;
};

}  // namespace meshscope::runtime
