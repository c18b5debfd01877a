// make_backend: the cpu backend always; cuda and cuda-virtual when profiler/runtime/cuda is built
// (MESHSCOPE_HAS_CUDA_BACKEND), so a CPU-only build never needs CUDA headers or libraries.
#include <ostream>
#include <stdexcept>
#include <string>

#include "profiler/runtime/backend.h"
#include "profiler/runtime/cpu_backend.h"
#include "profiler/runtime/process_cpu_backend.h"
#if MESHSCOPE_HAS_CUDA_BACKEND
#include "profiler/runtime/cuda_entry.h"
#endif

namespace meshscope::runtime {
namespace {

int gpu_count(std::string* why_none) {
#if MESHSCOPE_HAS_CUDA_BACKEND
  return cuda::usable_gpu_count(why_none);
#else
  *why_none = "this build has no CUDA backend (configure with MESHSCOPE_CUDA=ON)";
  return 0;
#endif
}

}  // namespace

std::optional<BackendKind> parse_backend_kind(std::string_view s) {
  for (size_t i = 0; i < kBackendKindNames.size(); ++i) {
    if (kBackendKindNames[i] == s) return static_cast<BackendKind>(i);
  }
  return std::nullopt;
}

bool cuda_backends_built() { return MESHSCOPE_HAS_CUDA_BACKEND != 0; }

BackendKind resolve_backend_kind(BackendKind requested, const mesh::MeshShape& mesh,
                                 std::ostream* log) {
  if (requested != BackendKind::kAuto) return requested;
  std::string why;
  const int gpus = gpu_count(&why);
  BackendKind picked = BackendKind::kCpu;
  std::string reason;
  if (gpus >= mesh.size() && gpus > 0) {
    picked = BackendKind::kCuda;
    reason = std::to_string(gpus) + " GPU(s) for " + std::to_string(mesh.size()) + " rank(s)";
  } else if (gpus > 0) {
    picked = BackendKind::kCudaVirtual;
    reason = std::to_string(gpus) + " GPU(s) for " + std::to_string(mesh.size()) +
             " ranks: virtual devices on GPU 0";
  } else {
    reason = "no GPU: " + why;
  }
  if (log != nullptr) *log << "backend: " << name(picked) << " (" << reason << ")\n";
  return picked;
}

namespace {

// One rank per process: auto picks cuda when this process sees a GPU (each process drives one).
std::unique_ptr<Backend> make_process_backend(BackendKind kind, const BackendOptions& options) {
  ProcessMessenger& processes = *options.processes;
  check_one_rank_per_process(options.mesh, processes);
  if (kind == BackendKind::kAuto) {
    std::string why;
    kind = gpu_count(&why) > 0 ? BackendKind::kCuda : BackendKind::kCpu;
    if (options.log != nullptr) {
      *options.log << "backend: " << name(kind) << " (a process per rank, "
                   << processes.description()
                   << (kind == BackendKind::kCpu ? "; no GPU: " + why : std::string()) << ")\n";
    }
  }
  switch (kind) {
    case BackendKind::kCpu:
      return std::make_unique<ProcessCpuBackend>(options.mesh, processes);
    case BackendKind::kCuda:
#if MESHSCOPE_HAS_CUDA_BACKEND
      return cuda::make_cuda_backend(options);
#else
      throw std::runtime_error(
          "backend 'cuda' is not in this build: configure with "
          "MESHSCOPE_CUDA=ON on a machine with the CUDA toolkit");
#endif
    case BackendKind::kCudaVirtual:
      throw std::runtime_error(
          "backend 'cuda-virtual' runs every rank on one GPU in one process: "
          "start it without mpirun");
    default:
      break;
  }
  throw std::runtime_error("make_backend: unknown backend kind");
}

}  // namespace

std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& options) {
  if (options.processes != nullptr) return make_process_backend(kind, options);
  kind = resolve_backend_kind(kind, options.mesh, options.log);
  switch (kind) {
    case BackendKind::kCpu:
      return std::make_unique<CpuBackend>(options.mesh, options.pin_threads);
#if MESHSCOPE_HAS_CUDA_BACKEND
    case BackendKind::kCuda:
      return cuda::make_cuda_backend(options);
    case BackendKind::kCudaVirtual:
      return cuda::make_cuda_virtual_backend(options);
#else
    case BackendKind::kCuda:
    case BackendKind::kCudaVirtual:
      throw std::runtime_error(std::string("backend '") + std::string(name(kind)) +
                               "' is not in this build: configure with MESHSCOPE_CUDA=ON on a "
                               "machine with the CUDA toolkit");
#endif
    case BackendKind::kAuto:
    case BackendKind::kCount:
      break;
  }
  throw std::runtime_error("make_backend: unknown backend kind");
}

}  // namespace meshscope::runtime
