// CudaVirtualBackend: builds the virtual devices and the group rendezvous up front, and each
// rank's device ops and transport on its own thread (its context must be current there).
#include "profiler/runtime/cuda/virtual_backend.h"

#include <cstdlib>
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

// CUDA_DEVICE_MAX_CONNECTIONS: the hardware work queues the host feeds the GPU through (1 to 32,
// default 8; CUDA C++ Programming Guide 12.x, "CUDA Environment Variables"). Streams beyond that
// share queues, and work on a shared queue runs in issue order, so streams of different virtual
// devices could serialise behind each other as no two real GPUs would. Counted as one pool for
// all green contexts (assumption: CUDA 13.0 does not say whether each gets its own).
int max_connections() {
  const char* v = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n >= 1 && n <= 32 ? n : 8;
}

std::string gpu_name(int gpu) {
  cudaDeviceProp prop{};
  return cudaGetDeviceProperties(&prop, gpu) == cudaSuccess ? prop.name : "GPU";
}

}  // namespace

CudaVirtualBackend::CudaVirtualBackend(const BackendOptions& options)
    : mesh_(options.mesh),
      gpu_(checked_gpu(options)),
      devices_(gpu_, mesh_.size(), options.green_contexts, options.log),
      mailboxes_(abort_),
      seats_(mesh_.size()),
      ranks_(mesh_.size()) {
  for (int r = 0; r < mesh_.size(); ++r) {
    for (int g = 0; g < static_cast<int>(mesh::GroupKind::kCount); ++g) {
      const auto kind = static_cast<mesh::GroupKind>(g);
      const std::vector<int> members = mesh_.group_ranks(kind, r);
      auto& slot = groups_[{g, members.front()}];
      if (!slot) slot = std::make_unique<Rendezvous>(static_cast<int>(members.size()), abort_);
      seats_[r][g] = {slot.get(), mesh_.index_in_group(kind, r)};
    }
  }
  description_ =
      "cuda-virtual (" + std::to_string(mesh_.size()) +
      (devices_.green() ? " green contexts x " + std::to_string(devices_.sms_each()) + " SMs of " +
                              std::to_string(devices_.sms_total())
                        : " stream pairs, no green contexts: " + devices_.fallback_reason()) +
      " on " + gpu_name(gpu_) + ", " + std::to_string(max_connections()) + " hardware queues)";
  const int streams = 2 * mesh_.size();
  if (streams > max_connections() && options.log != nullptr) {
    *options.log << "cuda-virtual: warning: " << streams << " streams share " << max_connections()
                 << " hardware queues (CUDA_DEVICE_MAX_CONNECTIONS): work of different virtual "
                    "devices may queue behind each other; set CUDA_DEVICE_MAX_CONNECTIONS=32\n";
  }
}

CudaVirtualBackend::~CudaVirtualBackend() {
  // Staged sends nobody received (after an abort): freed once the device is idle, since their
  // staging copies may still run and cudaFree does not wait for work on pool memory
  // (cuda_runtime_api.h, cudaFree). Their events went back to the senders, whose transports
  // destroy them below.
  MESHSCOPE_CUDA_WARN(cudaDeviceSynchronize());
  for (const Message& m : mailboxes_.drain()) MESHSCOPE_CUDA_WARN(cudaFree(m.staging));
  // Each rank's events, cuBLAS handle and pool go with its own context current, as they came.
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    try {
      devices_.make_current(r);
    } catch (const std::exception&) {
      // Released anyway: the driver still knows the handles.
    }
    ranks_[r].transport.reset();
    ranks_[r].ops.reset();
    ranks_[r].pool.reset();
  }
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
  r.pool = kernels::cuda::make_device_pool(gpu_);
  r.ops = std::make_unique<CudaDeviceOps>(d.compute.get(), r.pool.get(), abort_, HealthCheck{});
  // cuBLAS otherwise picks kernels (grid sizes, split-k) for all of the GPU's SMs.
  if (devices_.green()) r.ops->context().set_sm_count_target(devices_.sms_each());
  r.transport =
      std::make_unique<VirtualTransport>(rank, mesh_.size(), d.compute.get(), d.comm.get(),
                                         r.pool.get(), mailboxes_, seats_[rank], abort_);
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

void CudaVirtualBackend::synchronize(int rank) {
  device(rank).synchronize();
  // Every comm operation ends by ordering compute after it, so compute covers comm; waiting on
  // comm as well keeps that true if one ever does not.
  wait_stream(devices_[rank].comm.get(), abort_);
}

void CudaVirtualBackend::abort(const std::string& reason) noexcept {
  abort_.set(reason);
  mailboxes_.wake_all();
  for (auto& [key, g] : groups_) g->wake_all();
}

RankStreams CudaVirtualBackend::streams(int rank) const {
  return {gpu_, devices_[rank].compute.get(), devices_[rank].comm.get(), {}};
}

}  // namespace meshscope::runtime::cuda

namespace meshscope::runtime {

// The maker of backend_table.h's row "cuda-virtual": every rank in this process, on one GPU.
std::unique_ptr<Backend> make_cuda_virtual_backend(const BackendOptions& options) {
  if (options.processes != nullptr)
    throw std::runtime_error(
        "backend 'cuda-virtual' runs every rank on one GPU in one process: start it without "
        "mpirun");
  return std::make_unique<cuda::CudaVirtualBackend>(options);
}

}  // namespace meshscope::runtime
