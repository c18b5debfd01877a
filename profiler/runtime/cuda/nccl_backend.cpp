// CudaNcclBackend: devices, streams and communicators set up front on the driver thread; device
// ops and transports on each rank's thread; NCCL health polled while ranks wait.
#include "profiler/runtime/cuda/nccl_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/raii.h"
#include "profiler/runtime/clock.h"
#include "profiler/runtime/cuda/nccl_check.h"
#include "profiler/runtime/cuda/nccl_transport.h"

namespace meshscope::runtime::cuda {
namespace {

void require_gpus(int world) {
  const kernels::cuda::DeviceProbe probe = kernels::cuda::probe_devices();
  if (!probe.available()) throw std::runtime_error(kernels::cuda::no_device_message(probe));
  const int gpus = static_cast<int>(probe.devices.size());
  if (gpus < world) {
    throw std::runtime_error("cuda backend: " + std::to_string(world) + " ranks need " +
                             std::to_string(world) + " GPUs, this machine has " +
                             std::to_string(gpus) +
                             " (use --backend cuda-virtual to run them on one GPU)");
  }
}

// Under mpirun: this process's GPU is its index among the processes on its node (Open MPI, MPICH
// and Slurm say it), one GPU per process as NCCL requires.
int node_local_gpu() {
  const kernels::cuda::DeviceProbe probe = kernels::cuda::probe_devices();
  if (!probe.available()) throw std::runtime_error(kernels::cuda::no_device_message(probe));
  const int gpus = static_cast<int>(probe.devices.size());
  int local = 0;
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') {
      local = std::atoi(v);
      break;
    }
  }
  if (local < 0 || local >= gpus) {
    throw std::runtime_error("cuda backend: this is process " + std::to_string(local) +
                             " on its node, which has " + std::to_string(gpus) +
                             " GPU(s): start at most one process per GPU on each node");
  }
  return local;
}

// NCCL unique ids made by process 0 and handed to every process.
std::vector<ncclUniqueId> shared_unique_ids(ProcessMessenger& processes, size_t count,
                                            const std::string& what) {
  std::string mine;
  if (processes.index() == 0) {
    mine.resize(count * sizeof(ncclUniqueId));
    for (size_t i = 0; i < count; ++i) {
      ncclUniqueId id;
      MESHSCOPE_NCCL_CHECK(ncclGetUniqueId(&id));
      std::memcpy(mine.data() + i * sizeof id, &id, sizeof id);
    }
  }
  const std::string from_zero = processes.exchange(mine, what).front();
  if (from_zero.size() != count * sizeof(ncclUniqueId)) {
    throw std::runtime_error("cuda backend: process 0 sent " + std::to_string(from_zero.size()) +
                             " bytes of NCCL unique ids, " +
                             std::to_string(count * sizeof(ncclUniqueId)) + " expected");
  }
  std::vector<ncclUniqueId> ids(count);
  if (count > 0) std::memcpy(ids.data(), from_zero.data(), from_zero.size());
  return ids;
}

// Ends the thread's NCCL group on the way out of a scope that throws inside it, so a failed call
// does not leave the group open for the next NCCL call.
class GroupGuard {
 public:
  GroupGuard() { MESHSCOPE_NCCL_CHECK(ncclGroupStart()); }
  ~GroupGuard() {
    if (open_) ncclGroupEnd();
  }
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;
  void end() {
    open_ = false;
    MESHSCOPE_NCCL_CHECK(ncclGroupEnd());
  }

 private:
  bool open_ = true;
};

// The groups split from the world communicator: every kind but the world itself (ep and edp are
// single ranks or the dp group when the mesh has no ep carved out of dp).
std::vector<mesh::GroupKind> split_groups() {
  std::vector<mesh::GroupKind> kinds;
  for (int g = 0; g < static_cast<int>(mesh::GroupKind::kCount); ++g) {
    if (static_cast<mesh::GroupKind>(g) != mesh::GroupKind::kWorld)
      kinds.push_back(static_cast<mesh::GroupKind>(g));
  }
  return kinds;
}

}  // namespace

CudaNcclBackend::CudaNcclBackend(const BackendOptions& options)
    : mesh_(options.mesh),
      processes_(options.processes),
      gpu_of_(mesh_.size(), -1),
      ranks_(mesh_.size()) {
  if (processes_ == nullptr) {
    require_gpus(mesh_.size());
    for (int r = 0; r < mesh_.size(); ++r) gpu_of_[r] = r;
  } else {
    gpu_of_[processes_->index()] = node_local_gpu();
  }
  for (int r = 0; r < mesh_.size(); ++r) {
    if (!hosts(r)) continue;
    MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_of_[r]));
    ranks_[r].pool = kernels::cuda::make_device_pool(gpu_of_[r]);
    ranks_[r].compute = kernels::cuda::make_stream();
    ranks_[r].comm = kernels::cuda::make_stream();
  }
  if (processes_ == nullptr) {
    init_comms();
    init_channels();
  } else {
    init_comms_across_processes();
    init_channels_across_processes();
  }
  connect_channels();
  int version = 0;
  ncclGetVersion(&version);
  cudaDeviceProp prop{};
  const int first = processes_ == nullptr ? 0 : gpu_of_[processes_->index()];
  MESHSCOPE_CUDA_CHECK(cudaGetDeviceProperties(&prop, first));
  if (processes_ == nullptr) {
    description_ = "cuda (" + std::to_string(mesh_.size()) + " x " + prop.name + ", NCCL " +
                   std::to_string(version) + ", " + std::to_string(channels_.size()) +
                   " p2p channels)";
  } else {
    description_ = "cuda (a process per rank: " + processes_->description() + "; this one on GPU " +
                   std::to_string(first) + ", " + prop.name + ", NCCL " + std::to_string(version) +
                   ")";
  }
}

void CudaNcclBackend::check_hosted(int rank, const char* what) const {
  if (rank < 0 || rank >= mesh_.size() || !hosts(rank)) {
    throw std::runtime_error(std::string("cuda: ") + what + "(" + std::to_string(rank) +
                             "): not a rank of this process");
  }
}

void CudaNcclBackend::init_comms_across_processes() {
  const int n = mesh_.size();
  const int rank = processes_->index();
  const ncclUniqueId id = shared_unique_ids(*processes_, 1, "the NCCL unique id").front();
  MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_of_[rank]));
  Rank& me = ranks_[rank];
  me.groups.resize(static_cast<size_t>(mesh::GroupKind::kCount));
  ncclComm_t world = nullptr;
  MESHSCOPE_NCCL_CHECK(ncclCommInitRank(&world, n, id, rank));
  me.groups[static_cast<size_t>(mesh::GroupKind::kWorld)].comm = world;
  // Every process splits for its own rank, in the same order: colour = the group's first rank,
  // key = the member's position, as in one process.
  for (const mesh::GroupKind g : split_groups()) {
    const int color = mesh_.group_ranks(g, rank).front();
    MESHSCOPE_NCCL_CHECK(ncclCommSplit(world, color, mesh_.index_in_group(g, rank),
                                       &me.groups[static_cast<size_t>(g)].comm, nullptr));
  }
}

void CudaNcclBackend::init_channels_across_processes() {
  const int pp = mesh_.shape().pp;
  if (pp < 2) return;
  // The same channel list, in the same order, in every process; one unique id per channel.
  std::vector<std::pair<int, int>> pairs;
  for (int r = 0; r < mesh_.size(); ++r) {
    const int index = mesh_.index_in_group(mesh::GroupKind::kPp, r);
    for (int step : {1, pp - 1}) {
      const std::pair<int, int> p{
          r, mesh_.peer_in_group(mesh::GroupKind::kPp, r, (index + step) % pp)};
      if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
    }
  }
  const std::vector<ncclUniqueId> ids =
      shared_unique_ids(*processes_, pairs.size(), "the NCCL unique ids of the p2p channels");
  const int rank = processes_->index();
  MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_of_[rank]));
  // This rank's ends of its channels, initialised together (each waits for its peer process).
  GroupGuard group;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [from, to] = pairs[i];
    if (from != rank && to != rank) continue;
    auto& slot = channels_[pairs[i]];
    slot = std::make_unique<Channel>();
    slot->from = from;
    slot->to = to;
    if (from == rank) {
      MESHSCOPE_NCCL_CHECK(ncclCommInitRank(&slot->send_comm.comm, 2, ids[i], 0));
      slot->send_stream = kernels::cuda::make_stream();
    } else {
      MESHSCOPE_NCCL_CHECK(ncclCommInitRank(&slot->recv_comm.comm, 2, ids[i], 1));
      slot->recv_stream = kernels::cuda::make_stream();
    }
  }
  group.end();
}

void CudaNcclBackend::init_comms() {
  const int n = mesh_.size();
  std::vector<ncclComm_t> world(n);
  std::vector<int> devices(n);
  for (int r = 0; r < n; ++r) devices[r] = r;
  MESHSCOPE_NCCL_CHECK(ncclCommInitAll(world.data(), n, devices.data()));
  for (int r = 0; r < n; ++r) {
    ranks_[r].groups.resize(static_cast<size_t>(mesh::GroupKind::kCount));
    ranks_[r].groups[static_cast<size_t>(mesh::GroupKind::kWorld)].comm = world[r];
  }
  // Each process group is split from the world: color = the group's first rank, key = the
  // member's position, so comm ranks follow group order.
  for (const mesh::GroupKind g : split_groups()) {
    MESHSCOPE_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      const int color = mesh_.group_ranks(g, r).front();
      MESHSCOPE_NCCL_CHECK(ncclCommSplit(world[r], color, mesh_.index_in_group(g, r),
                                         &ranks_[r].groups[static_cast<size_t>(g)].comm, nullptr));
    }
    MESHSCOPE_NCCL_CHECK(ncclGroupEnd());
  }
}

void CudaNcclBackend::init_channels() {
  const int pp = mesh_.shape().pp;
  if (pp < 2) return;
  for (int r = 0; r < mesh_.size(); ++r) {
    const int index = mesh_.index_in_group(mesh::GroupKind::kPp, r);
    // Neighbours on the pipeline ring: next, previous (and, through the ring, the last stage's
    // link back to the first that interleaved schedules use).
    for (int step : {1, pp - 1}) {
      const int peer = mesh_.peer_in_group(mesh::GroupKind::kPp, r, (index + step) % pp);
      auto& slot = channels_[{r, peer}];
      if (slot) continue;
      slot = std::make_unique<Channel>();
      slot->from = r;
      slot->to = peer;
      ncclComm_t comms[2];
      const int devices[2] = {r, peer};
      MESHSCOPE_NCCL_CHECK(ncclCommInitAll(comms, 2, devices));
      slot->send_comm.comm = comms[0];
      slot->recv_comm.comm = comms[1];
      MESHSCOPE_CUDA_CHECK(cudaSetDevice(r));
      slot->send_stream = kernels::cuda::make_stream();
      MESHSCOPE_CUDA_CHECK(cudaSetDevice(peer));
      slot->recv_stream = kernels::cuda::make_stream();
    }
  }
}

void CudaNcclBackend::connect_channels() {
  // NCCL connects a p2p pair at its first send or receive (ncclTransportP2pSetup, src/transport.cc:
  // each side waits in bootstrapRecv for the other's connection data), so that first call blocks
  // the host until the peer posts its side. Two neighbours whose first calls went elsewhere would
  // wait for each other, and step 0's transfers would carry the connection's set-up. One byte each
  // way over every channel end this process holds, in one group, connects them all here: NCCL sets
  // up the communicators of a group each on a thread of its own (groupLaunch, src/group.cc: a
  // preconnect job per communicator, started together by asyncJobLaunch), so no end waits on
  // another.
  if (channels_.empty()) return;
  struct End {
    kernels::cuda::DeviceBuffer<uint8_t> byte;
    cudaStream_t stream;
    ncclComm_t comm;
  };
  std::vector<End> ends;
  for (const auto& [key, c] : channels_) {
    if (c->send_comm.comm != nullptr) {
      MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_of_[c->from]));
      ends.push_back(
          {kernels::cuda::DeviceBuffer<uint8_t>(1), c->send_stream.get(), c->send_comm.comm});
    }
    if (c->recv_comm.comm != nullptr) {
      MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_of_[c->to]));
      ends.push_back(
          {kernels::cuda::DeviceBuffer<uint8_t>(1), c->recv_stream.get(), c->recv_comm.comm});
    }
  }
  size_t next = 0;
  GroupGuard group;
  for (const auto& [key, c] : channels_) {
    if (c->send_comm.comm != nullptr) {
      const End& e = ends[next++];
      MESHSCOPE_NCCL_CHECK(ncclSend(e.byte.data(), 1, ncclUint8, 1, e.comm, e.stream));
    }
    if (c->recv_comm.comm != nullptr) {
      const End& e = ends[next++];
      MESHSCOPE_NCCL_CHECK(ncclRecv(e.byte.data(), 1, ncclUint8, 0, e.comm, e.stream));
    }
  }
  group.end();
  // The bytes are freed below; their transfers end first. No watchdog runs yet: a peer that died
  // after connecting would leave its kernel waiting, so the wait checks what a rank's waits check
  // (NCCL's errors, another process's abort: health_check) and a deadline (assumption: 300 s is
  // far beyond a 1-byte exchange's microseconds, and beyond any peer's set-up that has already
  // connected).
  const int64_t deadline = host_now_ns() + int64_t{300} * 1'000'000'000;
  const HealthCheck check = [&] {
    for (int r = 0; r < mesh_.size(); ++r)
      if (hosts(r)) health_check(r);
    if (host_now_ns() > deadline)
      throw std::runtime_error(
          "cuda backend: the p2p channels did not connect within 300 s (a peer process ended?)");
  };
  for (const End& e : ends) wait_stream(e.stream, abort_, check);
}

CudaNcclBackend::~CudaNcclBackend() {
  // After an abort, a rank that stopped outside wait_stream (the one that threw, or one that met
  // the abort in a barrier) still holds live communicators, and its GPU may hold a send or a
  // collective waiting for a peer whose communicators were aborted: each communicator has its own
  // abort flag, so that kernel would never end and the synchronize below would never return.
  if (abort_.aborted()) {
    for (int r = 0; r < mesh_.size(); ++r) {
      if (hosts(r)) abort_comms(r);
    }
  }
  for (int r = 0; r < mesh_.size(); ++r) {
    if (!hosts(r)) continue;
    if (cudaSetDevice(gpu_of_[r]) == cudaSuccess) MESHSCOPE_CUDA_WARN(cudaDeviceSynchronize());
    ranks_[r].transport.reset();
    ranks_[r].ops.reset();
  }
  for (int r = 0; r < mesh_.size(); ++r) {
    if (!hosts(r)) continue;
    for (CommHandle* h : handles_of(r)) {
      if (h->comm != nullptr && !h->aborted) ncclCommDestroy(h->comm);
    }
  }
}

std::vector<CommHandle*> CudaNcclBackend::handles_of(int rank) {
  std::vector<CommHandle*> out;
  for (auto& g : ranks_[rank].groups) out.push_back(&g);
  for (auto& [key, c] : channels_) {
    if (c->from == rank) out.push_back(&c->send_comm);
    if (c->to == rank) out.push_back(&c->recv_comm);
  }
  return out;
}

void CudaNcclBackend::abort_comms(int rank) {
  std::lock_guard lock(abort_mu_);
  if (ranks_[rank].comms_aborted) return;
  ranks_[rank].comms_aborted = true;
  for (CommHandle* h : handles_of(rank)) {
    if (h->comm != nullptr && !h->aborted) {
      ncclCommAbort(h->comm);
      h->aborted = true;
    }
  }
}

void CudaNcclBackend::health_check(int rank) {
  // Another process's abort arrives through the messenger.
  if (processes_ != nullptr && !abort_.aborted() && processes_->poll_abort()) {
    abort_.set(processes_->abort_state().reason());
  }
  if (abort_.aborted()) {
    abort_comms(rank);
    return;
  }
  for (CommHandle* h : handles_of(rank)) {
    ncclResult_t async = ncclSuccess;
    if (h->comm == nullptr || ncclCommGetAsyncError(h->comm, &async) != ncclSuccess) continue;
    if (async != ncclSuccess && async != ncclInProgress) {
      abort("rank " + std::to_string(rank) +
            ": NCCL reported an asynchronous error: " + ncclGetErrorString(async));
      health_check(rank);  // aborts this rank's communicators
      return;
    }
  }
}

void CudaNcclBackend::attach_thread(int rank) {
  check_hosted(rank, "attach_thread");
  MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_of_[rank]));
  Rank& r = ranks_[rank];
  if (r.ops) return;
  r.ops = std::make_unique<CudaDeviceOps>(r.compute.get(), r.pool.get(), abort_,
                                          [this, rank] { health_check(rank); });
  r.transport =
      std::make_unique<NcclTransport>(rank, *this, r.compute.get(), r.comm.get(), r.pool.get());
}

DeviceOps& CudaNcclBackend::device(int rank) {
  if (rank < 0 || rank >= mesh_.size() || !ranks_[rank].ops) {
    throw std::runtime_error("cuda: device(" + std::to_string(rank) + ") before attach_thread");
  }
  return *ranks_[rank].ops;
}

Transport& CudaNcclBackend::transport(int rank) {
  device(rank);
  return *ranks_[rank].transport;
}

void CudaNcclBackend::synchronize(int rank) {
  device(rank).synchronize();
  // Compute never waits on the channel streams (a send waits there for its receiver), so join
  // them too: the sends and the cudaFreeAsync of their staging buffers must have run before a
  // step counts as done and before the tracer flushes CUPTI (which does not wait for the GPU).
  const HealthCheck check = [this, rank] { health_check(rank); };
  wait_stream(ranks_[rank].comm.get(), abort_, check);
  for (const auto& [key, c] : channels_) {
    if (c->from == rank) wait_stream(c->send_stream.get(), abort_, check);
    if (c->to == rank) wait_stream(c->recv_stream.get(), abort_, check);
  }
  // The streams are idle now, so these return at once; they are the host synchronization after
  // which a pool hands memory freed on one stream to allocations on another (the CUDA
  // Programming Guide's stream-ordered allocator, reuse policies). The staging buffers are
  // allocated on the compute stream, which never waits on the channel streams they are freed on,
  // and only polled with cudaStreamQuery they might never come back.
  MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(ranks_[rank].comm.get()));
  for (const auto& [key, c] : channels_) {
    if (c->from == rank) MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(c->send_stream.get()));
  }
}

void CudaNcclBackend::abort(const std::string& reason) noexcept {
  abort_.set(reason);
  if (processes_ != nullptr) processes_->abort(reason);
}

RankStreams CudaNcclBackend::streams(int rank) const {
  check_hosted(rank, "streams");
  RankStreams s{gpu_of_[rank], ranks_[rank].compute.get(), ranks_[rank].comm.get(), {}};
  for (const auto& [key, c] : channels_) {
    if (c->from == rank)
      s.extra.emplace_back("p2p to rank " + std::to_string(c->to), c->send_stream.get());
    if (c->to == rank)
      s.extra.emplace_back("p2p from rank " + std::to_string(c->from), c->recv_stream.get());
  }
  return s;
}

ncclComm_t CudaNcclBackend::group_comm(int rank, mesh::GroupKind g) const {
  return ranks_[rank].groups[static_cast<size_t>(g)].comm;
}

Channel* CudaNcclBackend::channel(int from, int to) {
  auto it = channels_.find({from, to});
  return it == channels_.end() ? nullptr : it->second.get();
}

}  // namespace meshscope::runtime::cuda

namespace meshscope::runtime {

// The maker of backend_table.h's row "cuda" (in this process, or under mpirun one rank of it).
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<cuda::CudaNcclBackend>(options);
}

}  // namespace meshscope::runtime
