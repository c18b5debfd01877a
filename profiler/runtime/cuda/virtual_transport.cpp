// VirtualTransport: staged copies between virtual devices and two-phase collectives.
#include "profiler/runtime/cuda/virtual_transport.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "profiler/runtime/clock.h"

namespace meshscope::runtime::cuda {

VirtualTransport::VirtualTransport(int rank, int world, cudaStream_t compute, cudaStream_t comm,
                                   cudaMemPool_t pool, Mailboxes& mailboxes, GroupSeats seats,
                                   const AbortState& abort)
    : rank_(rank),
      world_(world),
      compute_(compute),
      comm_(comm),
      pool_(pool),
      mailboxes_(mailboxes),
      seats_(seats),
      abort_(abort),
      ready_(kernels::cuda::make_event()) {
  for (kernels::cuda::Event& e : read_) e = kernels::cuda::make_event();
}

VirtualTransport::~VirtualTransport() {
  // Events still with receivers at shutdown came back through Mailboxes::drain().
  for (cudaEvent_t e : mailboxes_.take_back(rank_)) kernels::cuda::Event owned(e);
}

kernels::cuda::Event VirtualTransport::send_event() {
  for (cudaEvent_t e : mailboxes_.take_back(rank_)) spare_.emplace_back(e);
  if (spare_.empty()) return kernels::cuda::make_event();
  kernels::cuda::Event e = std::move(spare_.back());
  spare_.pop_back();
  return e;
}

void VirtualTransport::check(int peer, const char* call) const {
  if (abort_.aborted()) abort_.throw_aborted();
  if (peer < 0 || peer >= world_) {
    throw std::runtime_error("rank " + std::to_string(rank_) + ": " + call + " to rank " +
                             std::to_string(peer) + ", outside the world of " +
                             std::to_string(world_));
  }
}

TransferInfo VirtualTransport::send(int peer, int64_t tag, const void* src, size_t bytes) {
  check(peer, "send");
  // Stage the payload so the sender may overwrite src and never waits for the receiver.
  to_comm_.order(compute_, comm_);
  void* staging = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaMallocFromPoolAsync(&staging, std::max<size_t>(bytes, 1), pool_, comm_));
  if (bytes > 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(staging, src, bytes, cudaMemcpyDeviceToDevice, comm_));
  }
  kernels::cuda::Event ready = send_event();
  MESHSCOPE_CUDA_CHECK(cudaEventRecord(ready.get(), comm_));
  to_compute_.order(comm_, compute_);  // later writes to src wait for the staging copy
  mailboxes_.post(rank_, peer, tag, {staging, bytes, ready.release(), host_now_ns()});
  return {};  // device timestamps tell when the copy ran
}

TransferInfo VirtualTransport::recv(int peer, int64_t tag, void* dst, size_t bytes) {
  check(peer, "recv");
  const Message m = mailboxes_.take(peer, rank_, tag);
  if (m.bytes != bytes) {
    // The sender's staging copy may still run: the free waits for it (cudaFreeAsync: the
    // allocation must not be accessed after the stream reaches the free).
    MESHSCOPE_CUDA_WARN(cudaStreamWaitEvent(comm_, m.ready, 0));
    mailboxes_.give_back(peer, m.ready);
    MESHSCOPE_CUDA_WARN(cudaFreeAsync(m.staging, comm_));
    throw std::runtime_error("rank " + std::to_string(rank_) + ": recv from rank " +
                             std::to_string(peer) + " tag " + std::to_string(tag) + " expects " +
                             std::to_string(bytes) + " bytes, the send carried " +
                             std::to_string(m.bytes));
  }
  to_comm_.order(compute_, comm_);  // dst may still be read by earlier compute
  const cudaError_t waited = cudaStreamWaitEvent(comm_, m.ready, 0);
  mailboxes_.give_back(peer, m.ready);  // the wait holds the record: the sender may reuse it
  MESHSCOPE_CUDA_CHECK(waited);
  if (bytes > 0) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst, m.staging, bytes, cudaMemcpyDeviceToDevice, comm_));
  }
  MESHSCOPE_CUDA_CHECK(cudaFreeAsync(m.staging, comm_));
  to_compute_.order(comm_, compute_);
  return {m.posted_ns};
}

int64_t VirtualTransport::last_arrival(const std::vector<Contribution>& c) {
  int64_t t = 0;
  for (const auto& x : c) t = std::max(t, x.t_ns);
  return t;
}

std::vector<Contribution> VirtualTransport::gather_ready(const GroupSeat& seat, const void* src,
                                                         void* dst) {
  to_comm_.order(compute_, comm_);
  MESHSCOPE_CUDA_CHECK(cudaEventRecord(ready_.get(), comm_));
  auto all = seat.rendezvous->exchange(seat.member, {src, dst, ready_.get(), host_now_ns()});
  for (const auto& c : all) MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(comm_, c.event, 0));
  return all;
}

void VirtualTransport::finish_reading(mesh::GroupKind group) {
  const GroupSeat& seat = seats_[static_cast<size_t>(group)];
  const cudaEvent_t read = read_[static_cast<size_t>(group)].get();
  MESHSCOPE_CUDA_CHECK(cudaEventRecord(read, comm_));
  auto all = seat.rendezvous->exchange(seat.member, {nullptr, nullptr, read, 0});
  for (const auto& c : all) MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(comm_, c.event, 0));
}

TransferInfo VirtualTransport::all_reduce(mesh::GroupKind group, float* data, size_t count) {
  if (abort_.aborted()) abort_.throw_aborted();
  const GroupSeat& seat = seats_[static_cast<size_t>(group)];
  if (seat.rendezvous->size() == 1) return {host_now_ns()};
  const auto all = gather_ready(seat, data, nullptr);
  std::vector<const float*> inputs;
  for (const auto& c : all) inputs.push_back(static_cast<const float*>(c.src));
  // Every member sums the same buffers in group order with the same kernel: identical bits.
  void* tmp = nullptr;
  MESHSCOPE_CUDA_CHECK(
      cudaMallocFromPoolAsync(&tmp, std::max<size_t>(count, 1) * sizeof(float), pool_, comm_));
  kernels::cuda::sum(comm_, count, inputs.data(), static_cast<int>(inputs.size()),
                     static_cast<float*>(tmp));
  finish_reading(group);  // nobody overwrites its data before every member has summed it
  MESHSCOPE_CUDA_CHECK(
      cudaMemcpyAsync(data, tmp, count * sizeof(float), cudaMemcpyDeviceToDevice, comm_));
  MESHSCOPE_CUDA_CHECK(cudaFreeAsync(tmp, comm_));
  to_compute_.order(comm_, compute_);
  return {last_arrival(all)};
}

TransferInfo VirtualTransport::all_gather(mesh::GroupKind group, const float* src, float* dst,
                                          size_t count) {
  if (abort_.aborted()) abort_.throw_aborted();
  const GroupSeat& seat = seats_[static_cast<size_t>(group)];
  const auto all = gather_ready(seat, src, dst);
  for (size_t i = 0; i < all.size(); ++i) {
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst + i * count, all[i].src, count * sizeof(float),
                                         cudaMemcpyDeviceToDevice, comm_));
  }
  if (all.size() > 1) finish_reading(group);
  to_compute_.order(comm_, compute_);
  return {last_arrival(all)};
}

TransferInfo VirtualTransport::reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                                              size_t count) {
  if (abort_.aborted()) abort_.throw_aborted();
  const GroupSeat& seat = seats_[static_cast<size_t>(group)];
  const auto all = gather_ready(seat, src, dst);
  std::vector<const float*> inputs;
  for (const auto& c : all)
    inputs.push_back(static_cast<const float*>(c.src) + seat.member * count);
  kernels::cuda::sum(comm_, count, inputs.data(), static_cast<int>(inputs.size()), dst);
  if (all.size() > 1) finish_reading(group);
  to_compute_.order(comm_, compute_);
  return {last_arrival(all)};
}

TransferInfo VirtualTransport::all_to_all(mesh::GroupKind group, const float* src, float* dst,
                                          size_t count) {
  if (abort_.aborted()) abort_.throw_aborted();
  const GroupSeat& seat = seats_[static_cast<size_t>(group)];
  const auto all = gather_ready(seat, src, dst);
  // Block i of dst: member i's block for this member, copied from that member's buffer.
  for (size_t i = 0; i < all.size(); ++i) {
    const float* from = static_cast<const float*>(all[i].src) + seat.member * count;
    MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(dst + i * count, from, count * sizeof(float),
                                         cudaMemcpyDeviceToDevice, comm_));
  }
  if (all.size() > 1) finish_reading(group);
  to_compute_.order(comm_, compute_);
  return {last_arrival(all)};
}

}  // namespace meshscope::runtime::cuda
