// Moving data between ranks: point-to-point messages matched by (source, destination, tag) and
// collectives on the mesh's process groups. cpu: blocking channels between threads; cuda: NCCL or
// device-to-device copies ordered by events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/mesh/mesh.h"

namespace meshscope::runtime {

// Thrown by a blocked or later transport (or device) call once Backend::abort() was called; what()
// is the abort reason. The executor catches it on every rank thread and reports the reason.
struct Aborted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// When the data a receiving call needed became available, on the host clock (runtime/clock.h):
// recv: when the matching send was issued; collective: when the last member of the group arrived.
// A backend may report a later moment when the transfer itself only started then (the cpu
// backend reports when the waiting thread woke up and began copying).
// A tracer starts the transfer's span at max(call begin, ready_ns) so the wait shows as idle.
// 0 where the backend cannot tell (a GPU backend then relies on device timestamps instead).
// done_ns (send): when the payload was handed over (copied and queued) before the receiver was
// woken; a tracer ends the send's span there, since on a host with more rank threads than cores
// waking the receiver can preempt the sender for milliseconds that are not transfer time. 0 where
// the backend cannot tell (the span then ends when send() returns).
// called_ns: when the rank made the receiving call, where that was after its action began (an
// all-reduce that first runs an inner one); 0: at the action's begin. Set by the executor.
struct TransferInfo {
  int64_t ready_ns = 0;
  int64_t done_ns = 0;
  int64_t called_ns = 0;
};

// Contract (every backend):
// - Threading: a rank's Transport is used by that rank's host thread only; ranks run
//   concurrently. Ordering with the rank's DeviceOps: see device_ops.h (issue order is the order).
// - send never waits for the receiver (eager / buffered): the source buffer may be overwritten by
//   work issued after send() returns, and later work of the sender never waits on the receiver.
// - recv blocks the host until the matching send was issued (then, on a GPU, the copy is enqueued
//   and later work of the receiver is ordered after it). Messages with the same (src, dst, tag)
//   arrive in send order. A size that differs from the sent size throws std::runtime_error.
// - Collectives block the host until every member of the caller's group (mesh::Mesh::group_ranks
//   of `group` for this rank) has called the same collective with the same count; members call
//   collectives on a group in the same order. Results are bitwise identical on every member
//   (summation in group order), so replicated parameters stay identical.
// - A peer equal to the caller's own rank is allowed (a stage sending to a stage on the same rank).
// - Abort: after Backend::abort(reason), blocked calls wake and throw Aborted(reason), and so
//   does every later call. No call blocks forever once abort() was called.
// - Errors: misuse (bad peer, count mismatch) throws std::runtime_error naming the rank and call.
class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;

  // The tags `peer` receives from this rank within one step, in the order it receives them
  // (each once; the order repeats every step). Called before the first send to `peer`. Backends
  // that match messages by tag (cpu, cuda-virtual) need not care; one whose channels deliver in
  // send order (cuda: NCCL) holds a send back until every message the peer takes before it has
  // gone (send_sequencer.h), so receives may come in another order than the sends.
  virtual void expect_recv_order(int peer, const std::vector<int64_t>& tags) {
    (void)peer;
    (void)tags;
  }

  virtual TransferInfo send(int peer, int64_t tag, const void* src, size_t bytes) = 0;
  virtual TransferInfo recv(int peer, int64_t tag, void* dst, size_t bytes) = 0;
  // Once every rank has finished its last step: what was sent to this rank and never received
  // ("" when nothing, or when the backend cannot tell). A send without its receive, which a
  // schedule run with --no-validate can hold: each later step's receive then took the message an
  // earlier step left, computing on another step's data.
  virtual std::string undelivered() const { return ""; }
  // undelivered()'s text: `count` messages left, one of them `bytes` long from rank `from`.
  static std::string undelivered_text(size_t count, int from, size_t bytes) {
    return std::to_string(count) +
           (count == 1 ? " message sent to it was" : " messages sent to it were") +
           " never received (one from rank " + std::to_string(from) + ", " + std::to_string(bytes) +
           " bytes): a send without its receive, which also makes a later step's receive take "
           "the message an earlier step left";
  }

  // In place: data = sum over the group's members, `count` floats.
  virtual TransferInfo all_reduce(mesh::GroupKind group, float* data, size_t count) = 0;
  // dst[i * count + j] = src of member i, element j (count floats from each member).
  virtual TransferInfo all_gather(mesh::GroupKind group, const float* src, float* dst,
                                  size_t count) = 0;
  // dst = elements [member * count, (member + 1) * count) of the sum of every member's src
  // (src holds count * group size floats).
  virtual TransferInfo reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                                      size_t count) = 0;
  // dst[i * count + j] = element [member * count + j] of member i's src: each member's src holds
  // count * group size floats, block k going to member k (block `member` stays), as NCCL's
  // alltoall (nccl-tests src/alltoall.cu: a grouped ncclSend/ncclRecv per peer). src != dst.
  virtual TransferInfo all_to_all(mesh::GroupKind group, const float* src, float* dst,
                                  size_t count) = 0;
};

}  // namespace meshscope::runtime
