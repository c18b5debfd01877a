// cuda-virtual's Transport: P2P as device-to-device copies ordered by events (the sender stages
// its buffer and records an event, the receiver's host waits for the message, its stream waits
// on the event and copies, then hands the event back), collectives as kernels over the peers'
// buffers on one GPU. Staging and scratch memory come from the rank's own pool.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "kernels/cuda/ops.h"
#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/cuda/stream_sync.h"
#include "profiler/runtime/cuda/virtual_fabric.h"
#include "profiler/runtime/transport.h"
#include "sim/mesh/mesh.h"

namespace meshscope::runtime::cuda {

// One member's place in each of its groups.
struct GroupSeat {
  Rendezvous* rendezvous = nullptr;
  int member = 0;
};
using GroupSeats = std::array<GroupSeat, static_cast<size_t>(mesh::GroupKind::kCount)>;

class VirtualTransport final : public Transport {
 public:
  // Created on the rank's thread (its events belong to its context); destroyed with that
  // context current (CudaVirtualBackend's destructor), as it destroys its events.
  VirtualTransport(int rank, int world, cudaStream_t compute, cudaStream_t comm, cudaMemPool_t pool,
                   Mailboxes& mailboxes, GroupSeats seats, const AbortState& abort);
  ~VirtualTransport() override;
  VirtualTransport(const VirtualTransport&) = delete;
  VirtualTransport& operator=(const VirtualTransport&) = delete;

  int rank() const override { return rank_; }
  TransferInfo send(int peer, int64_t tag, const void* src, size_t bytes) override;
  TransferInfo recv(int peer, int64_t tag, void* dst, size_t bytes) override;
  TransferInfo all_reduce(mesh::GroupKind group, float* data, size_t count) override;
  TransferInfo all_gather(mesh::GroupKind group, const float* src, float* dst,
                          size_t count) override;
  TransferInfo reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                              size_t count) override;
  TransferInfo all_to_all(mesh::GroupKind group, const float* src, float* dst,
                          size_t count) override;

 private:
  void check(int peer, const char* call) const;
  // Phase 1 of a collective: marks this member's buffers ready and swaps them with the group.
  std::vector<Contribution> gather_ready(const GroupSeat& seat, const void* src, void* dst);
  // Phase 2: every member finished reading; then later compute may overwrite the buffers.
  void finish_reading(mesh::GroupKind group);
  static int64_t last_arrival(const std::vector<Contribution>& c);
  // An event of this rank's for a send: one the receivers gave back, else a new one.
  kernels::cuda::Event send_event();

  int rank_;
  int world_;
  cudaStream_t compute_;
  cudaStream_t comm_;
  cudaMemPool_t pool_;
  Mailboxes& mailboxes_;
  GroupSeats seats_;
  const AbortState& abort_;
  StreamLink to_comm_, to_compute_;
  kernels::cuda::Event ready_;
  // One per group: finish_reading's peers wait on it after their rendezvous returns, when this
  // rank may already be past another group's collective; one event for every group had been
  // recorded again there, and a slow peer then waited on the other group's work (a stall in the
  // trace, no deadlock). A group's own next record comes only after its next rendezvous, which
  // every member reaches after issuing its waits.
  std::array<kernels::cuda::Event, static_cast<size_t>(mesh::GroupKind::kCount)> read_;
  std::vector<kernels::cuda::Event> spare_;  // send events given back, ready for reuse
};

}  // namespace meshscope::runtime::cuda
