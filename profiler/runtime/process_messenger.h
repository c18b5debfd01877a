// Tagged messages, gathers and aborts between the processes of a multi-process launch, on top of
// a ProcessLink. One rank runs per process; the messenger serves the rank's transport (p2p and
// collectives), the executor (step barriers, gathering results) and backend set-up (the NCCL
// unique id).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/process_link.h"

namespace meshscope::runtime {

// A receive whose deadline passed before `peer` sent (ProcessMessenger's bounded waits): the peer
// was stopped, is stuck, or ended without a word.
class PeerSilentError : public std::runtime_error {
 public:
  PeerSilentError(const std::string& message, int peer)
      : std::runtime_error(message), peer_(peer) {}
  int peer() const { return peer_; }

 private:
  int peer_;
};

class ProcessMessenger {
 public:
  // What a message is for; each channel has its own tag space.
  // kDriver: exchanges during a run (step barriers, NCCL ids), in step with the other processes
  // while all run; kEnding: exchanges after a process's run ended (a process may end its run
  // before reaching a barrier the others reached, so these count on their own).
  // kHeartbeat: a process's ranks progressed (counted on arrival, never stashed).
  enum class Channel : uint8_t {
    kPeer = 0,
    kGroup = 1,
    kDriver = 2,
    kAbort = 3,
    kEnding = 4,
    kHeartbeat = 5
  };

  explicit ProcessMessenger(std::unique_ptr<ProcessLink> link);

  int index() const { return index_; }
  int size() const { return size_; }
  const std::string& description() const { return description_; }

  // Eager: copies `bytes` and returns; never waits for the receiver.
  void send(int to, Channel channel, int64_t tag, const void* data, size_t bytes);
  // Waits for the message `from` sent on (channel, tag) (messages with the same key arrive in send
  // order) and returns its bytes. Throws Aborted once abort() was called here or in any other
  // process (whose reason it then carries), std::runtime_error when `deadline_ns` (host clock; 0:
  // none) passes first, naming `what` it waited for.
  std::string receive(int from, Channel channel, int64_t tag, const std::string& what,
                      int64_t deadline_ns = 0);

  // Every member's `mine` in member order at every member (members: process indices, this one
  // included, the same list in every member). Abortable like receive().
  std::vector<std::string> all_gather(const std::vector<int>& members, Channel channel, int64_t tag,
                                      const std::string& mine, const std::string& what,
                                      int64_t deadline_ns = 0);

  // mine[k] to members[k]; returns what every member sent this one, in member order (this
  // member's own mine[] entry for itself). The personalised exchange behind an all-to-all.
  std::vector<std::string> all_to_all(const std::vector<int>& members, Channel channel, int64_t tag,
                                      std::vector<std::string> mine, const std::string& what);

  // Driver-level exchanges: every process calls each kind in the same order (a sequence number per
  // kind is the tag). exchange() is abortable; the *_after_abort ones still complete after an
  // abort, so processes can tell each other how their run ended. They are bounded by the
  // deadline; with `quiet_ns` > 0, a process still heard from (any message, a heartbeat: its
  // ranks still compute) is waited for past it, until it has been silent for quiet_ns.
  // exchange() waits until `deadline_ns` (host clock; 0: for ever), then throws PeerSilentError.
  std::vector<std::string> exchange(const std::string& mine, const std::string& what,
                                    int64_t deadline_ns = 0);
  std::vector<std::string> exchange_after_abort(const std::string& mine, const std::string& what,
                                                int64_t deadline_ns, int64_t quiet_ns = 0);

  // Every process's `mine` at process `root` (in process order; empty elsewhere), bounded like
  // exchange_after_abort() and not abortable; the others send to `root` only.
  std::vector<std::string> gather_after_abort(int root, const std::string& mine,
                                              const std::string& what, int64_t deadline_ns,
                                              int64_t quiet_ns = 0);

  // The messages of `channel` that arrived and were never taken: how many, and one of them (its
  // sender and size). Reads what has arrived first. Once every process has passed a barrier
  // (exchange), all they sent this one before it has arrived (the link keeps post order).
  struct Unreceived {
    size_t count = 0;
    int from = -1;
    size_t bytes = 0;
  };
  Unreceived unreceived(Channel channel);

  // Sets the abort flag with `reason` (any thread; never touches the link). The next wait on this
  // process tells every other process, whose waits then throw Aborted too.
  void abort(const std::string& reason) noexcept;
  bool aborted() const noexcept { return abort_.aborted(); }
  // Reads what has arrived (an abort notice from another process among it) without waiting, and
  // tells the others of a local abort; returns aborted(). For waits outside the messenger (a GPU
  // stream behind an NCCL transfer) that must end when another process aborts.
  bool poll_abort();

  // The watchdogs' shared liveness: each process's sees only its own rank, so a peer computing
  // longer than the timeout would look stalled to the others. send_heartbeat() tells every other
  // process this one's ranks progressed; take_heartbeats() reads what has arrived and returns how
  // many heartbeats came since its last call.
  void send_heartbeat();
  int64_t take_heartbeats();
  const AbortState& abort_state() const { return abort_; }

 private:
  using Key = std::tuple<int, uint8_t, int64_t>;  // (from, channel, tag)

  // One pass: sends the abort notice if due, moves arrived messages into the stash. Lock held.
  void pump_locked();
  void notify_abort_locked();
  std::optional<std::string> take_locked(const Key& key);
  // Gives up once deadline_ns (0: never) has passed and, where quiet_ns > 0, the sender has been
  // silent for quiet_ns.
  std::string wait_for(const Key& key, const std::string& what, int64_t deadline_ns, bool abortable,
                       int64_t quiet_ns = 0);
  // Every process's message on (kEnding, tag), `mine` in this process's place; not abortable.
  std::vector<std::string> collect_ending(int64_t tag, const std::string& mine,
                                          const std::string& what, int64_t deadline_ns,
                                          int64_t quiet_ns);

  std::unique_ptr<ProcessLink> link_;
  int index_ = 0;
  int size_ = 1;
  std::string description_;
  AbortState abort_;
  std::mutex mu_;  // guards the link, the stash and the counters
  bool abort_sent_ = false;
  std::map<Key, std::vector<std::string>> stash_;  // arrived, not yet taken, in arrival order
  int64_t heartbeats_ = 0;                         // arrived, not yet taken
  std::vector<int64_t> last_heard_ns_;             // per process: when its last message came
  int64_t driver_sequence_ = 0;
  int64_t ending_sequence_ = 0;
};

}  // namespace meshscope::runtime
