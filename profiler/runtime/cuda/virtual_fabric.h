// The host side of cuda-virtual's transport: mailboxes that carry a sender's staged buffer and
// the event marking it ready to the receiver, and rendezvous rounds in which the members of a
// group swap buffer pointers and events. Plain C++ (events are opaque handles here), so its
// matching, blocking and abort behaviour is tested without a GPU.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <cuda_runtime_api.h>

#include "profiler/runtime/abort_state.h"

namespace meshscope::runtime::cuda {

struct Message {
  void* staging = nullptr;  // device buffer holding the payload (receiver frees it)
  size_t bytes = 0;
  cudaEvent_t ready = nullptr;  // recorded after the staging copy (sender's; given back)
  int64_t posted_ns = 0;        // host clock when the sender posted it
};

// Messages between ranks matched by (source, destination, tag), FIFO for equal keys; and the way
// back for each message's event: the sender made it in its own (green) context, so the receiver
// hands it back once its stream wait is enqueued (cudaStreamWaitEvent takes the record as it is
// then), and the sender reuses or destroys it on its own thread.
class Mailboxes {
 public:
  explicit Mailboxes(const AbortState& abort) : abort_(abort) {}
  void post(int src, int dst, int64_t tag, Message m);
  // Blocks until a matching message was posted; throws Aborted after an abort.
  Message take(int src, int dst, int64_t tag);
  void wake_all();
  // A message's event, back to the rank that posted it.
  void give_back(int owner, cudaEvent_t event);
  // The events given back to `owner` so far (each once).
  std::vector<cudaEvent_t> take_back(int owner);
  // Messages posted and never taken, for their staging buffers to be freed at shutdown; their
  // events go back to their senders (take_back) as if received.
  std::vector<Message> drain();

 private:
  const AbortState& abort_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int64_t>, std::deque<Message>> queues_;
  std::map<int, std::vector<cudaEvent_t>> returned_;  // by owner
};

// What a member contributes to one rendezvous round.
struct Contribution {
  const void* src = nullptr;
  void* dst = nullptr;
  cudaEvent_t event = nullptr;
  int64_t t_ns = 0;
};

// Rounds among `size` members: each exchange() returns every member's contribution of that round,
// once all have arrived. Two slots alternate by round parity: a member can only start round r + 2
// after every member left round r + 1, hence after all read round r.
class Rendezvous {
 public:
  Rendezvous(int size, const AbortState& abort);
  std::vector<Contribution> exchange(int member, const Contribution& mine);
  void wake_all();
  int size() const { return size_; }

 private:
  const int size_;
  const AbortState& abort_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t round_ = 0;
  int arrived_ = 0;
  std::vector<Contribution> slots_[2];
};

}  // namespace meshscope::runtime::cuda
