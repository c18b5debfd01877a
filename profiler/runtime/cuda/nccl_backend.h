// cuda: one rank per GPU in this process, a host thread per rank. NCCL communicators: the world,
// one per process group split from it (ncclCommSplit), and a two-rank channel per ordered pair of
// pipeline neighbours, so P2P in opposite directions never queues behind each other (NCCL runs a
// communicator's operations in order; a send waiting for its receiver would block a recv issued
// after it on the same communicator). Sends are staged so the sender never waits (eager, as the
// Transport contract asks). A hung or failed NCCL operation ends the run: ranks poll
// ncclCommGetAsyncError while they wait, the watchdog's abort makes them ncclCommAbort.
// Under mpirun (options.processes) each process runs one rank on one GPU of its node (its
// node-local index): process 0 makes the NCCL unique ids (world, and one per p2p channel) and the
// messenger carries them to every process, as nccl-tests does over MPI; an abort in any process
// reaches the others through the messenger while they wait.
#pragma once

#include <nccl.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/cuda/cuda_device_ops.h"
#include "profiler/runtime/cuda/gpu_backend.h"
#include "profiler/runtime/cuda/stream_sync.h"

namespace meshscope::runtime::cuda {

class NcclTransport;

// A communicator handle of one rank; aborted handles are never destroyed again.
struct CommHandle {
  ncclComm_t comm = nullptr;
  bool aborted = false;
};

// Two ranks, one direction: `from` sends on its stream, `to` receives on its own.
struct Channel {
  int from = 0;
  int to = 0;
  CommHandle send_comm;               // from's handle (comm rank 0)
  CommHandle recv_comm;               // to's handle (comm rank 1)
  kernels::cuda::Stream send_stream;  // on from's GPU
  kernels::cuda::Stream recv_stream;  // on to's GPU
};

class CudaNcclBackend final : public GpuBackend {
 public:
  explicit CudaNcclBackend(const BackendOptions& options);
  ~CudaNcclBackend() override;

  BackendKind kind() const override { return BackendKind::kCuda; }
  std::string description() const override { return description_; }
  const mesh::Mesh& mesh() const override { return mesh_; }
  bool hosts(int rank) const override {
    return processes_ == nullptr || rank == processes_->index();
  }
  ProcessMessenger* processes() override { return processes_; }
  void attach_thread(int rank) override;
  DeviceOps& device(int rank) override;
  Transport& transport(int rank) override;
  void synchronize(int rank) override;
  void abort(const std::string& reason) noexcept override;
  bool aborted() const noexcept override { return abort_.aborted(); }
  RankStreams streams(int rank) const override;

  // For NcclTransport.
  ncclComm_t group_comm(int rank, mesh::GroupKind g) const;
  Channel* channel(int from, int to);
  const AbortState& abort_state() const { return abort_; }

 private:
  struct Rank {
    kernels::cuda::MemPool pool;  // first: outlives the ops and transport that allocate from it
    kernels::cuda::Stream compute;
    kernels::cuda::Stream comm;
    std::vector<CommHandle> groups;  // by GroupKind
    std::unique_ptr<CudaDeviceOps> ops;
    std::unique_ptr<NcclTransport> transport;
    bool comms_aborted = false;
  };
  void init_comms();
  void init_comms_across_processes();
  void init_channels();
  void init_channels_across_processes();
  // One grouped exchange over every channel: NCCL's first-use connect happens here, not in a step.
  void connect_channels();
  void check_hosted(int rank, const char* what) const;
  // Between polls of a rank's waits: asynchronous NCCL errors abort the run; after an abort the
  // rank aborts its communicators so nothing stays blocked on the GPU.
  void health_check(int rank);
  // ncclCommAbort on each of a rank's communicators not yet aborted, once per rank.
  void abort_comms(int rank);
  std::vector<CommHandle*> handles_of(int rank);

  mesh::Mesh mesh_;
  ProcessMessenger* processes_ = nullptr;  // null: every rank in this process
  std::vector<int> gpu_of_;                // CUDA device ordinal of each hosted rank
  AbortState abort_;
  std::string description_;
  std::vector<Rank> ranks_;
  std::map<std::pair<int, int>, std::unique_ptr<Channel>> channels_;
  std::mutex abort_mu_;  // ncclCommAbort of a rank's handles, once
};

}  // namespace meshscope::runtime::cuda
