// NcclTransport: P2P on the pair's channel, collectives on the group's communicator.
#include "profiler/runtime/cuda/nccl_transport.h"

#include <stdexcept>
#include <string>

#include "kernels/cuda/check.h"
#include "profiler/runtime/cuda/nccl_check.h"

namespace meshscope::runtime::cuda {

NcclTransport::NcclTransport(int rank, CudaNcclBackend& backend, cudaStream_t compute,
                             cudaStream_t comm, cudaMemPool_t pool)
    : rank_(rank), backend_(backend), compute_(compute), comm_(comm), pool_(pool) {}

Channel& NcclTransport::channel(int from, int to, const char* call) {
  const AbortState& abort = backend_.abort_state();
  if (abort.aborted()) abort.throw_aborted();
  Channel* c = backend_.channel(from, to);
  if (c == nullptr) {
    throw std::runtime_error("rank " + std::to_string(rank_) + ": " + call + " between ranks " +
                             std::to_string(from) + " and " + std::to_string(to) +
                             ": the cuda backend connects only pipeline neighbours");
  }
  return *c;
}

TransferInfo NcclTransport::send(int peer, int64_t tag, const void* src, size_t bytes) {
  // Stage on the compute stream: src is free again in stream order, and the NCCL send (which
  // waits on the GPU for its receiver) sits on the channel's stream, which compute never waits on.
  Channel* c = peer == rank_ ? nullptr : &channel(rank_, peer, "send");
  void* staging = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaMallocFromPoolAsync(&staging, bytes == 0 ? 1 : bytes, pool_, compute_));
  if (bytes > 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(staging, src, bytes, cudaMemcpyDeviceToDevice, compute_));
  }
  if (peer == rank_) {
    self_[tag].emplace_back(staging, bytes);
    return {};
  }
  std::vector<Staged> ready;
  try {
    ready = sequencers_[peer].push(tag, Staged{staging, bytes});
  } catch (const std::invalid_argument& e) {
    MESHSCOPE_CUDA_WARN(cudaFreeAsync(staging, compute_));
    throw std::runtime_error("rank " + std::to_string(rank_) + ": send to rank " +
                             std::to_string(peer) + ": " + e.what());
  }
  for (const Staged& m : ready) post_send(*c, m);
  return {};  // device timestamps tell when the transfer ran
}

void NcclTransport::post_send(Channel& c, const Staged& m) {
  // A message held back was staged earlier on the compute stream: ordering after all compute
  // issued so far covers it.
  to_p2p_.order(compute_, c.send_stream.get());
  MESHSCOPE_NCCL_CHECK(ncclGroupStart());
  MESHSCOPE_NCCL_CHECK(
      ncclSend(m.data, m.bytes, ncclUint8, 1, c.send_comm.comm, c.send_stream.get()));
  MESHSCOPE_NCCL_CHECK(ncclGroupEnd());
  MESHSCOPE_CUDA_CHECK(cudaFreeAsync(m.data, c.send_stream.get()));
}

void NcclTransport::expect_recv_order(int peer, const std::vector<int64_t>& tags) {
  if (peer == rank_) return;  // sends to self are matched by tag
  sequencers_[peer].expect(tags);
}

TransferInfo NcclTransport::recv(int peer, int64_t tag, void* dst, size_t bytes) {
  if (peer == rank_) {
    auto& q = self_[tag];
    if (q.empty() || q.front().second != bytes) {
      throw std::runtime_error("rank " + std::to_string(rank_) + ": recv from itself, tag " +
                               std::to_string(tag) + ": no matching send of " +
                               std::to_string(bytes) + " bytes was issued before");
    }
    auto [staging, size] = q.front();
    q.pop_front();
    if (size > 0) {
      MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, staging, size, cudaMemcpyDeviceToDevice, compute_));
    }
    MESHSCOPE_CUDA_CHECK(cudaFreeAsync(staging, compute_));
    return {};
  }
  // NCCL matches a channel's messages in order; the sender released them in this rank's receive
  // order (expect_recv_order), so the tag needs no matching here (sizes are the schedule's).
  Channel& c = channel(peer, rank_, "recv");
  to_p2p_.order(compute_, c.recv_stream.get());
  MESHSCOPE_NCCL_CHECK(ncclGroupStart());
  MESHSCOPE_NCCL_CHECK(ncclRecv(dst, bytes, ncclUint8, 0, c.recv_comm.comm, c.recv_stream.get()));
  MESHSCOPE_NCCL_CHECK(ncclGroupEnd());
  from_p2p_.order(c.recv_stream.get(), compute_);
  return {};  // ready time unknown on the host: the device timestamps tell
}

TransferInfo NcclTransport::collective(mesh::GroupKind group,
                                       const std::function<void(ncclComm_t)>& call) {
  const AbortState& abort = backend_.abort_state();
  if (abort.aborted()) abort.throw_aborted();
  to_comm_.order(compute_, comm_);
  call(backend_.group_comm(rank_, group));
  to_compute_.order(comm_, compute_);
  return {};
}

TransferInfo NcclTransport::all_reduce(mesh::GroupKind group, float* data, size_t count) {
  return collective(group, [&](ncclComm_t comm) {
    MESHSCOPE_NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm, comm_));
  });
}

TransferInfo NcclTransport::all_gather(mesh::GroupKind group, const float* src, float* dst,
                                       size_t count) {
  return collective(group, [&](ncclComm_t comm) {
    MESHSCOPE_NCCL_CHECK(ncclAllGather(src, dst, count, ncclFloat, comm, comm_));
  });
}

TransferInfo NcclTransport::reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                                           size_t count) {
  return collective(group, [&](ncclComm_t comm) {
    MESHSCOPE_NCCL_CHECK(ncclReduceScatter(src, dst, count, ncclFloat, ncclSum, comm, comm_));
  });
}

TransferInfo NcclTransport::all_to_all(mesh::GroupKind group, const float* src, float* dst,
                                       size_t count) {
  // As nccl-tests' alltoall (src/alltoall.cu): one grouped ncclSend/ncclRecv per peer, block k of
  // src to comm rank k, block i of dst from comm rank i (comm ranks follow group order).
  return collective(group, [&](ncclComm_t comm) {
    int members = 0;
    MESHSCOPE_NCCL_CHECK(ncclCommCount(comm, &members));
    MESHSCOPE_NCCL_CHECK(ncclGroupStart());
    for (int k = 0; k < members; ++k) {
      const size_t offset = static_cast<size_t>(k) * count;
      MESHSCOPE_NCCL_CHECK(ncclSend(src + offset, count, ncclFloat, k, comm, comm_));
      MESHSCOPE_NCCL_CHECK(ncclRecv(dst + offset, count, ncclFloat, k, comm, comm_));
    }
    MESHSCOPE_NCCL_CHECK(ncclGroupEnd());
  });
}

}  // namespace meshscope::runtime::cuda
