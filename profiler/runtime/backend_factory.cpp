// make_backend: the cpu backend always; cuda and cuda-virtual from the GPU module when this build
// made one (MESHSCOPE_HAS_CUDA_BACKEND), loaded only when a GPU backend is asked for or probed.
#include <ostream>
#include <stdexcept>
#include <string>

#include "profiler/runtime/backend.h"
#include "profiler/runtime/cpu_backend.h"
#include "profiler/runtime/cuda_entry.h"
#include "profiler/runtime/process_cpu_backend.h"
#include "traces/enum_names.h"

namespace meshscope::runtime {
namespace {

// The GPU module's table; nullptr with *why when this build has none or it cannot load.
const cuda::CudaBackendEntry* cuda_entry(std::string* why) {
  if (MESHSCOPE_HAS_CUDA_BACKEND == 0) {
    *why = "this build has no CUDA backend (configure with MESHSCOPE_CUDA=ON)";
    return nullptr;
  }
  using Get = const cuda::CudaBackendEntry* (*)();
  const auto get =
      reinterpret_cast<Get>(plugin_symbol(kGpuModuleFile, cuda::kCudaBackendSymbol, why));
  if (get == nullptr) return nullptr;
  const cuda::CudaBackendEntry* e = get();
  if (e->abi != kPluginAbi || e->options_size != sizeof(BackendOptions)) {
    *why = std::string(kGpuModuleFile) + " is from another build of meshscope";
    return nullptr;
  }
  return e;
}

int gpu_count(std::string* why_none) {
  const cuda::CudaBackendEntry* e = cuda_entry(why_none);
  return e != nullptr ? e->usable_gpu_count(why_none) : 0;
}

// The GPU backend `kind` (cuda or cuda-virtual), or an error saying why there is none.
std::unique_ptr<Backend> make_gpu_backend(BackendKind kind, const BackendOptions& options) {
  std::string why;
  const cuda::CudaBackendEntry* e = cuda_entry(&why);
  if (e == nullptr) {
    throw std::runtime_error(std::string("backend '") + std::string(name(kind)) +
                             "' is not available: " + why);
  }
  return kind == BackendKind::kCuda ? e->make_cuda_backend(options)
                                    : e->make_cuda_virtual_backend(options);
}

}  // namespace

std::optional<BackendKind> parse_backend_kind(std::string_view s) {
  return traces::parse_enum<BackendKind>(kBackendKindNames, s);
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
      return make_gpu_backend(kind, options);
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
    case BackendKind::kCuda:
    case BackendKind::kCudaVirtual:
      return make_gpu_backend(kind, options);
    case BackendKind::kAuto:
    case BackendKind::kCount:
      break;
  }
  throw std::runtime_error("make_backend: unknown backend kind");
}

}  // namespace meshscope::runtime
