// cuda-virtual: the mesh's ranks as virtual devices on one GPU (virtual_devices.h), each with a
// host thread, CudaDeviceOps on its compute stream and a VirtualTransport on its comm stream, a
// memory pool of its own (as a GPU of its own would have), and a cuBLAS handle tuned for its SMs.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/cuda/cuda_device_ops.h"
#include "profiler/runtime/cuda/gpu_backend.h"
#include "profiler/runtime/cuda/virtual_devices.h"
#include "profiler/runtime/cuda/virtual_transport.h"

namespace meshscope::runtime::cuda {

class CudaVirtualBackend final : public GpuBackend {
 public:
  explicit CudaVirtualBackend(const BackendOptions& options);
  ~CudaVirtualBackend() override;

  BackendKind kind() const override { return BackendKind::kCudaVirtual; }
  std::string description() const override { return description_; }
  const mesh::Mesh& mesh() const override { return mesh_; }
  void attach_thread(int rank) override;
  DeviceOps& device(int rank) override;
  Transport& transport(int rank) override;
  void synchronize(int rank) override;
  void abort(const std::string& reason) noexcept override;
  bool aborted() const noexcept override { return abort_.aborted(); }
  RankStreams streams(int rank) const override;

 private:
  struct Rank {
    kernels::cuda::MemPool pool;  // first: outlives the ops and transport that allocate from it
    std::unique_ptr<CudaDeviceOps> ops;
    std::unique_ptr<VirtualTransport> transport;
  };
  void check_attached(int rank, const char* what) const;

  mesh::Mesh mesh_;
  int gpu_;
  AbortState abort_;
  std::string description_;
  VirtualDevices devices_;
  Mailboxes mailboxes_;
  std::map<std::pair<int, int>, std::unique_ptr<Rendezvous>> groups_;  // (kind, first rank)
  std::vector<GroupSeats> seats_;
  std::vector<Rank> ranks_;  // destroyed before devices_ (declared after it)
};

}  // namespace meshscope::runtime::cuda
