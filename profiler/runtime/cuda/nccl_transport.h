// The cuda backend's Transport: staged ncclSend/ncclRecv on the pair's channel (each in its own
// group call; sends released in the receiver's order), NCCL collectives on the group's
// communicator, ordered with the compute stream by events. A peer equal to the caller is served by
// a local copy.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "profiler/runtime/cuda/nccl_backend.h"
#include "profiler/runtime/send_sequencer.h"
#include "profiler/runtime/transport.h"

namespace meshscope::runtime::cuda {

class NcclTransport final : public Transport {
 public:
  // Staging buffers come from `pool`, the rank's own (kernels::cuda::make_device_pool).
  NcclTransport(int rank, CudaNcclBackend& backend, cudaStream_t compute, cudaStream_t comm,
                cudaMemPool_t pool);

  int rank() const override { return rank_; }
  void expect_recv_order(int peer, const std::vector<int64_t>& tags) override;
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
  struct Staged {
    void* data = nullptr;  // on the compute stream's pool; freed on the channel's stream
    size_t bytes = 0;
  };
  Channel& channel(int from, int to, const char* call);
  void post_send(Channel& c, const Staged& m);
  // Runs `call` (NCCL collectives on `group`'s communicator, given) on the comm stream, after the
  // compute stream's work so far and before its next; refused once the run is aborted.
  TransferInfo collective(mesh::GroupKind group, const std::function<void(ncclComm_t)>& call);

  int rank_;
  CudaNcclBackend& backend_;
  cudaStream_t compute_;
  cudaStream_t comm_;
  cudaMemPool_t pool_;
  StreamLink to_comm_, to_compute_, to_p2p_, from_p2p_;
  // Sends to self: staged buffers by tag, FIFO.
  std::map<int64_t, std::deque<std::pair<void*, size_t>>> self_;
  // Sends to each peer, released in the order the peer receives them: NCCL pairs a channel's
  // sends and recvs by position, so a message must not overtake one the peer takes earlier.
  std::map<int, SendSequencer<Staged>> sequencers_;
};

}  // namespace meshscope::runtime::cuda
