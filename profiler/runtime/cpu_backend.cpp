// Wiring of the cpu backend: a mailbox per rank, a CpuGroup per process group of the mesh.
#include "profiler/runtime/cpu_backend.h"

#include <pthread.h>
#include <sched.h>

#include <stdexcept>

#include "profiler/runtime/process_cpu_backend.h"

namespace meshscope::runtime {

CpuTransport::CpuTransport(
    int rank, std::vector<std::unique_ptr<CpuMailbox>>& mailboxes,
    std::array<GroupSlot, static_cast<size_t>(mesh::GroupKind::kCount)> groups,
    const AbortState& abort)
    : rank_(rank), mailboxes_(mailboxes), groups_(groups), abort_(abort) {}

void CpuTransport::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= static_cast<int>(mailboxes_.size())) {
    throw std::runtime_error(std::string(what) + " on rank " + std::to_string(rank_) +
                             ": peer rank " + std::to_string(peer) + " is outside [0, " +
                             std::to_string(mailboxes_.size()) + ")");
  }
}

TransferInfo CpuTransport::send(int peer, int64_t tag, const void* src, size_t bytes) {
  check_peer(peer, "send");
  if (abort_.aborted()) abort_.throw_aborted();
  return TransferInfo{0, mailboxes_[peer]->post(rank_, tag, src, bytes)};
}

TransferInfo CpuTransport::recv(int peer, int64_t tag, void* dst, size_t bytes) {
  check_peer(peer, "recv");
  return mailboxes_[rank_]->take(peer, tag, dst, bytes);
}

TransferInfo CpuTransport::all_reduce(mesh::GroupKind group, float* data, size_t count) {
  const GroupSlot& s = slot(group);
  return s.group->run(traces::CollectiveOp::kAllReduce, s.member, data, data, count);
}

TransferInfo CpuTransport::all_gather(mesh::GroupKind group, const float* src, float* dst,
                                      size_t count) {
  const GroupSlot& s = slot(group);
  return s.group->run(traces::CollectiveOp::kAllGather, s.member, src, dst, count);
}

TransferInfo CpuTransport::reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                                          size_t count) {
  const GroupSlot& s = slot(group);
  return s.group->run(traces::CollectiveOp::kReduceScatter, s.member, src, dst, count);
}

TransferInfo CpuTransport::all_to_all(mesh::GroupKind group, const float* src, float* dst,
                                      size_t count) {
  const GroupSlot& s = slot(group);
  return s.group->run(traces::CollectiveOp::kAllToAll, s.member, src, dst, count);
}

CpuBackend::CpuBackend(const mesh::MeshShape& shape, bool pin_threads) : mesh_(shape) {
  const int world = mesh_.size();
  if (pin_threads) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
      for (int c = 0; c < CPU_SETSIZE && static_cast<int>(cpus_.size()) < world; ++c) {
        if (CPU_ISSET(c, &allowed)) cpus_.push_back(c);
      }
    }
    if (static_cast<int>(cpus_.size()) < world) cpus_.clear();  // more ranks than CPUs
  }
  for (int r = 0; r < world; ++r) {
    mailboxes_.push_back(std::make_unique<CpuMailbox>(r, abort_, work_));
    devices_.push_back(std::make_unique<CpuDeviceOps>());
  }
  // One CpuGroup per group of each kind; every member's transport points at it. A group is named
  // by its first member, so its member list is made once (keying by the list made it O(dp^2)).
  std::vector<std::array<CpuTransport::GroupSlot, static_cast<size_t>(mesh::GroupKind::kCount)>>
      slots(world);
  std::vector<CpuGroup*> by_first(world);
  for (size_t g = 0; g < static_cast<size_t>(mesh::GroupKind::kCount); ++g) {
    const auto kind = static_cast<mesh::GroupKind>(g);
    std::fill(by_first.begin(), by_first.end(), nullptr);
    for (int r = 0; r < world; ++r) {
      const int first = mesh_.extent(kind) > 0 ? mesh_.peer_in_group(kind, r, 0) : 0;
      CpuGroup*& group = by_first[first];
      if (group == nullptr) {
        groups_.push_back(
            std::make_unique<CpuGroup>(kind, mesh_.group_ranks(kind, r), abort_, work_));
        group = groups_.back().get();
      }
      slots[r][g] = {group, mesh_.index_in_group(kind, r)};
    }
  }
  for (int r = 0; r < world; ++r) {
    transports_.push_back(std::make_unique<CpuTransport>(r, mailboxes_, slots[r], abort_));
  }
}

std::string CpuBackend::description() const {
  return "cpu (" + std::to_string(mesh_.size()) + (mesh_.size() == 1 ? " thread" : " threads") +
         (cpus_.empty() ? ")" : ", pinned)");
}

void CpuBackend::check_rank(int rank, const char* what) const {
  if (rank < 0 || rank >= mesh_.size()) {
    throw std::out_of_range(std::string("cpu backend: ") + what + " of rank " +
                            std::to_string(rank) + ", world size is " +
                            std::to_string(mesh_.size()));
  }
}

void CpuBackend::attach_thread(int rank) {
  check_rank(rank, "attach_thread");
  if (cpus_.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus_[rank], &set);
  // Best effort: a refused affinity only costs timing accuracy.
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

DeviceOps& CpuBackend::device(int rank) {
  check_rank(rank, "device");
  return *devices_[rank];
}

Transport& CpuBackend::transport(int rank) {
  check_rank(rank, "transport");
  return *transports_[rank];
}

void CpuBackend::synchronize(int rank) { check_rank(rank, "synchronize"); }

void CpuBackend::abort(const std::string& reason) noexcept {
  abort_.set(reason);
  for (auto& m : mailboxes_) m->wake();
  for (auto& g : groups_) g->wake();
}

// The maker of backend_table.h's row "cpu": rank threads, or under mpirun this process's one rank.
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options) {
  if (options.processes != nullptr)
    return std::make_unique<ProcessCpuBackend>(options.mesh, *options.processes);
  return std::make_unique<CpuBackend>(options.mesh, options.pin_threads);
}

}  // namespace meshscope::runtime
