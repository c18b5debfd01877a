// Transfers and collectives of one rank per process, as messages.
#include "profiler/runtime/process_cpu_backend.h"

#include <cstring>
#include <stdexcept>

#include "kernels/cpu/ops.h"
#include "profiler/runtime/clock.h"

namespace meshscope::runtime {
namespace {

using traces::CollectiveOp;

// A collective's message: the op (1 byte), the count of floats (8 bytes), the floats.
constexpr size_t kCollectiveHeader = 1 + sizeof(uint64_t);

std::string collective_message(CollectiveOp op, const float* data, size_t count) {
  std::string m(kCollectiveHeader + count * sizeof(float), '\0');
  m[0] = static_cast<char>(op);
  const uint64_t n = count;
  std::memcpy(m.data() + 1, &n, sizeof n);
  if (count > 0) std::memcpy(m.data() + kCollectiveHeader, data, count * sizeof(float));
  return m;
}

std::string describe(const std::string& m) {
  uint64_t count = 0;
  if (m.size() >= kCollectiveHeader) std::memcpy(&count, m.data() + 1, sizeof count);
  const auto op = static_cast<uint8_t>(m.empty() ? 0 : m[0]);
  const std::string_view name = op < static_cast<uint8_t>(CollectiveOp::kCount)
                                    ? traces::name(static_cast<CollectiveOp>(op))
                                    : std::string_view("an unknown collective");
  return std::string(name) + " of " + std::to_string(count) + " floats";
}

}  // namespace

void check_one_rank_per_process(const mesh::MeshShape& shape, const ProcessMessenger& messenger) {
  if (messenger.size() != shape.size()) {
    throw std::runtime_error(
        "the mesh " + mesh::to_string(shape) + " has " + std::to_string(shape.size()) +
        (shape.size() == 1 ? " rank" : " ranks") + " but " + std::to_string(messenger.size()) +
        (messenger.size() == 1 ? " process was" : " processes were") +
        " launched; a multi-process run has one rank per process: launch " +
        std::to_string(shape.size()) + " (mpirun -np " + std::to_string(shape.size()) + ")" +
        // One process that a launcher's leftover variables made a launch of its own.
        (messenger.size() == 1 && !launch_variables_text().empty()
             ? "; or, not launched by mpirun, unset " + launch_variables_text() +
                   ", which the environment sets"
             : std::string()));
  }
}

ProcessCpuTransport::ProcessCpuTransport(int rank, const mesh::Mesh& mesh,
                                         ProcessMessenger& messenger)
    : rank_(rank), mesh_(mesh), messenger_(messenger) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g] = mesh_.group_ranks(static_cast<mesh::GroupKind>(g), rank_);
  }
}

void ProcessCpuTransport::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= mesh_.size()) {
    throw std::runtime_error(std::string(what) + " on rank " + std::to_string(rank_) +
                             ": peer rank " + std::to_string(peer) + " is outside [0, " +
                             std::to_string(mesh_.size()) + ")");
  }
}

TransferInfo ProcessCpuTransport::send(int peer, int64_t tag, const void* src, size_t bytes) {
  check_peer(peer, "send");
  if (messenger_.aborted()) messenger_.abort_state().throw_aborted();
  messenger_.send(peer, ProcessMessenger::Channel::kPeer, tag, src, bytes);
  return TransferInfo{0, host_now_ns()};
}

TransferInfo ProcessCpuTransport::recv(int peer, int64_t tag, void* dst, size_t bytes) {
  check_peer(peer, "recv");
  const std::string got = messenger_.receive(peer, ProcessMessenger::Channel::kPeer, tag,
                                             "the message with tag " + std::to_string(tag));
  const int64_t ready = host_now_ns();
  if (got.size() != bytes) {
    throw std::runtime_error("recv on rank " + std::to_string(rank_) + " from rank " +
                             std::to_string(peer) + " (tag " + std::to_string(tag) +
                             "): " + std::to_string(bytes) + " bytes expected, " +
                             std::to_string(got.size()) + " sent");
  }
  if (bytes > 0) std::memcpy(dst, got.data(), bytes);
  return TransferInfo{ready, 0};
}

std::string ProcessCpuTransport::undelivered() const {
  const ProcessMessenger::Unreceived left = messenger_.unreceived(ProcessMessenger::Channel::kPeer);
  return left.count == 0 ? "" : undelivered_text(left.count, left.from, left.bytes);
}

int64_t ProcessCpuTransport::next_tag(mesh::GroupKind group) {
  const size_t g = static_cast<size_t>(group);
  return (static_cast<int64_t>(g) << 48) | sequence_[g]++;
}

void ProcessCpuTransport::check_same(mesh::GroupKind group, const std::string& mine,
                                     const std::string& got, int from) const {
  if (got.size() == mine.size() && got.size() >= kCollectiveHeader &&
      std::memcmp(got.data(), mine.data(), kCollectiveHeader) == 0) {
    return;
  }
  throw std::runtime_error(describe(mine) + " on rank " + std::to_string(rank_) + " met " +
                           describe(got) + " from rank " + std::to_string(from) + " in group " +
                           std::string(mesh::name(group)));
}

std::vector<std::string> ProcessCpuTransport::gather_group(mesh::GroupKind group, CollectiveOp op,
                                                           const float* src, size_t count_in,
                                                           int64_t& ready_ns) {
  const int64_t tag = next_tag(group);
  const std::string mine = collective_message(op, src, count_in);
  const std::vector<int>& members = groups_[static_cast<size_t>(group)];
  std::vector<std::string> all = messenger_.all_gather(
      members, ProcessMessenger::Channel::kGroup, tag, mine,
      std::string(traces::name(op)) + " of group " + std::string(mesh::name(group)));
  ready_ns = host_now_ns();
  for (size_t i = 0; i < all.size(); ++i) check_same(group, mine, all[i], members[i]);
  return all;
}

TransferInfo ProcessCpuTransport::all_reduce(mesh::GroupKind group, float* data, size_t count) {
  int64_t ready = 0;
  // The payloads sit 9 bytes into their strings, not aligned for float: sum aligned copies.
  const auto all = gather_group(group, CollectiveOp::kAllReduce, data, count, ready);
  const WorkInFlight::Scope summing(work_);
  std::vector<std::vector<float>> inputs(all.size(), std::vector<float>(count));
  std::vector<const float*> ptrs;
  for (size_t i = 0; i < all.size(); ++i) {
    if (count > 0) std::memcpy(inputs[i].data(), all[i].data() + kCollectiveHeader, count * 4);
    ptrs.push_back(inputs[i].data());
  }
  kernels::cpu::sum(count, ptrs.data(), static_cast<int>(ptrs.size()), data);
  return TransferInfo{ready, 0};
}

TransferInfo ProcessCpuTransport::all_gather(mesh::GroupKind group, const float* src, float* dst,
                                             size_t count) {
  int64_t ready = 0;
  const auto all = gather_group(group, CollectiveOp::kAllGather, src, count, ready);
  const WorkInFlight::Scope copying(work_);
  for (size_t i = 0; i < all.size(); ++i) {
    if (count > 0) std::memcpy(dst + i * count, all[i].data() + kCollectiveHeader, count * 4);
  }
  return TransferInfo{ready, 0};
}

TransferInfo ProcessCpuTransport::reduce_scatter(mesh::GroupKind group, const float* src,
                                                 float* dst, size_t count) {
  int64_t ready = 0;
  const size_t n = groups_[static_cast<size_t>(group)].size();
  const auto all = gather_group(group, CollectiveOp::kReduceScatter, src, count * n, ready);
  const size_t member = static_cast<size_t>(mesh_.index_in_group(group, rank_));
  const WorkInFlight::Scope summing(work_);
  std::vector<std::vector<float>> inputs(all.size(), std::vector<float>(count));
  std::vector<const float*> ptrs;
  for (size_t i = 0; i < all.size(); ++i) {
    if (count > 0) {
      std::memcpy(inputs[i].data(), all[i].data() + kCollectiveHeader + member * count * 4,
                  count * 4);
    }
    ptrs.push_back(inputs[i].data());
  }
  kernels::cpu::sum(count, ptrs.data(), static_cast<int>(ptrs.size()), dst);
  return TransferInfo{ready, 0};
}

TransferInfo ProcessCpuTransport::all_to_all(mesh::GroupKind group, const float* src, float* dst,
                                             size_t count) {
  // A message per peer carrying only its block (as NCCL's grouped send/recv per peer), on the
  // tag the group's next collective has, so a member calling another collective is caught.
  const int64_t tag = next_tag(group);
  const std::vector<int>& members = groups_[static_cast<size_t>(group)];
  const size_t self = static_cast<size_t>(mesh_.index_in_group(group, rank_));
  std::vector<std::string> mine;
  for (size_t k = 0; k < members.size(); ++k) {
    mine.push_back(collective_message(CollectiveOp::kAllToAll, src + k * count, count));
  }
  const std::string own = mine[self];
  const std::vector<std::string> got =
      messenger_.all_to_all(members, ProcessMessenger::Channel::kGroup, tag, std::move(mine),
                            "all_to_all of group " + std::string(mesh::name(group)));
  const int64_t ready = host_now_ns();
  for (size_t i = 0; i < got.size(); ++i) {
    check_same(group, own, got[i], members[i]);
    if (count > 0) std::memcpy(dst + i * count, got[i].data() + kCollectiveHeader, count * 4);
  }
  return TransferInfo{ready, 0};
}

ProcessCpuBackend::ProcessCpuBackend(const mesh::MeshShape& shape, ProcessMessenger& messenger)
    : mesh_(shape), messenger_(messenger), rank_(messenger.index()) {
  check_one_rank_per_process(shape, messenger);
  transport_ = std::make_unique<ProcessCpuTransport>(rank_, mesh_, messenger_);
}

std::string ProcessCpuBackend::description() const {
  return "cpu (a process per rank: " + messenger_.description() + ")";
}

void ProcessCpuBackend::check_rank(int rank, const char* what) const {
  if (rank != rank_) {
    throw std::out_of_range(std::string("cpu backend (process ") + std::to_string(rank_) +
                            "): " + what + " of rank " + std::to_string(rank) +
                            ", which runs in another process");
  }
}

void ProcessCpuBackend::attach_thread(int rank) { check_rank(rank, "attach_thread"); }

DeviceOps& ProcessCpuBackend::device(int rank) {
  check_rank(rank, "device");
  return device_;
}

Transport& ProcessCpuBackend::transport(int rank) {
  check_rank(rank, "transport");
  return *transport_;
}

void ProcessCpuBackend::synchronize(int rank) { check_rank(rank, "synchronize"); }

}  // namespace meshscope::runtime
