// CudaVirtualBackend: builds the virtual devices and the group rendezvous up front, and each
// rank's device ops and transport on its own thread (its context must be current there).
#include "profiler/runtime/cuda/virtual_backend.h"

#include <stdexcept>
#include <string>

#include "kernels/cuda/check.h"
#include "kernels/cuda/device.h"

namespace meshscope::runtime::cuda {
namespace {

int checked_gpu(const BackendOptions& options) {
  const kernels::cuda::DeviceProbe probe = kernels::cuda::probe_devices();
  if (!probe.available()) throw std::runtime_error(kernels::cuda::no_device_message(probe));
  if (options.gpu < 0 || options.gpu >= static_cast<int>(probe.devices.size())) {
    throw std::runtime_error("cuda-virtual: GPU " + std::to_string(options.gpu) +
                             " does not exist (" + std::to_string(probe.devices.size()) +
                             " present)");
  }
  return options.gpu;
}

std::string gpu_name(int gpu) {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, gpu) == cudaSuccess ? prop.name : "GPU";
}

}  // namespace

CudaVirtualBackend::CudaVirtualBackend(const BackendOptions& options)
    : mesh_(options.mesh), gpu_(checked_gpu(options)),
      devices_(gpu_, mesh_.size(), options.green_contexts, options.log), mailboxes_(abort_),
      seats_(mesh_.size()), ranks_(mesh_.size()) {
  for (int r = 0; r < mesh_.size(); ++r) {
    for (int g = 0; g < static_cast<int>(mesh::GroupKind::kCount); ++g) {
      const auto kind = static_cast<mesh::GroupKind>(g);
      const std::vector<int> members = mesh_.group_ranks(kind, r);
      auto& slot = groups_[{g, members.front()}];
      if (!slot) slot = std::make_unique<Rendezvous>(static_cast<int>(members.size()), abort_);
      seats_[r][g] = {slot.get(), mesh_.index_in_group(kind, r)};
    }
  }
  description_ = "cuda-virtual (" + std::to_string(mesh_.size()) +
                 (devices_.green() ? " green contexts x " + std::to_string(devices_.sms_each()) +
                                         " SMs"
                                   : " stream pairs, no green contexts: " +
                                         devices_.fallback_reason()) +
                 " on " + gpu_name(gpu_) + ")";
}

CudaVirtualBackend::~CudaVirtualBackend() {
  // Staged sends nobody received: free them before the streams go.
  for (const Message& m : mailboxes_.drain()) {
    MESHSCOPE_CUDA_WARN(cudaFree(m.staging));
    MESHSCOPE_CUDA_WARN(cudaEventDestroy(m.ready));
  }
  MESHSCOPE_CUDA_WARN(cudaDeviceSynchronize());
  ranks_.clear();
}

void CudaVirtualBackend::attach_thread(int rank) {
  if (rank < 0 || rank >= mesh_.size()) {
    throw std::runtime_error("cuda-virtual: attach_thread(" + std::to_string(rank) +
                             ") outside the world of " + std::to_string(mesh_.size()));
  }
  MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu_));
  devices_.make_current(rank);
  Rank& r = ranks_[rank];
  if (r.ops) return;
  VirtualDevice& d = devices_[rank];
  r.ops = std::make_unique<CudaDeviceOps>(d.compute.get(), abort_, HealthCheck{});
  r.transport = std::make_unique<VirtualTransport>(rank, mesh_.size(), d.compute.get(),
                                                   d.comm.get(), mailboxes_, seats_[rank], abort_);
}

void CudaVirtualBackend::check_attached(int rank, const char* what) const {
  if (rank < 0 || rank >= mesh_.size() || !ranks_[rank].ops) {
    throw std::runtime_error(std::string("cuda-virtual: ") + what + "(" + std::to_string(rank) +
                             ") before attach_thread on that rank");
  }
}

DeviceOps& CudaVirtualBackend::device(int rank) {
  check_attached(rank, "device");
  return *ranks_[rank].ops;
}

Transport& CudaVirtualBackend::transport(int rank) {
  check_attached(rank, "transport");
  return *ranks_[rank].transport;
}

void CudaVirtualBackend::synchronize(int rank) { device(rank).synchronize(); }

void CudaVirtualBackend::abort(const std::string& reason) noexcept {
  abort_.set(reason);
  mailboxes_.wake_all();
  for (auto& [key, g] : groups_) g->wake_all();
}

RankStreams CudaVirtualBackend::streams(int rank) const {
  return {gpu_, devices_[rank].compute.get(), devices_[rank].comm.get(), {}};
}

}  // namespace meshscope::runtime::cuda
