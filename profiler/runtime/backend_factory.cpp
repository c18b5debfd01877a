// make_backend: the rows of backend_table.h. Linked rows are called directly; the GPU module's
// rows come from libmeshscope-gpu.so when this build made one (MESHSCOPE_HAS_CUDA_BACKEND),
// loaded only when one of them is asked for or the GPUs are probed.
#include <ostream>
#include <stdexcept>
#include <string>

#include "profiler/runtime/backend.h"
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

// The row's maker: linked in, or the GPU module's (an error saying why when there is none).
std::unique_ptr<Backend> make_kind(BackendKind kind, const BackendOptions& options) {
  switch (kind) {
#define MESHSCOPE_LINKED_BACKEND_CASE(kind, name, maker, description) \
  case BackendKind::kind:                                             \
    return maker(options);
    MESHSCOPE_LINKED_BACKENDS(MESHSCOPE_LINKED_BACKEND_CASE)
#undef MESHSCOPE_LINKED_BACKEND_CASE
    default:
      break;
  }
  if (kind == BackendKind::kAuto || kind >= BackendKind::kCount || !info(kind).in_gpu_module)
    throw std::runtime_error("make_backend: unknown backend kind");
  std::string why;
  const cuda::CudaBackendEntry* e = cuda_entry(&why);
  if (e == nullptr) {
    throw std::runtime_error(std::string("backend '") + std::string(name(kind)) +
                             "' is not available: " + why);
  }
  return e->make_backend(kind, options);
}

}  // namespace

std::optional<BackendKind> parse_backend_kind(std::string_view s) {
  static constexpr auto kNames = [] {
    std::array<std::string_view, kBackends.size()> names{};
    for (size_t i = 0; i < kBackends.size(); ++i) names[i] = kBackends[i].name;
    return names;
  }();
  return traces::parse_enum<BackendKind>(kNames, s);
}

std::string backend_names() {
  std::string out;
  for (const BackendInfo& b : kBackends) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

std::string backend_descriptions() {
  std::string out;
  for (const BackendInfo& b : kBackends)
    out += (out.empty() ? "  " : "\n  ") + std::string(b.name) + ": " + std::string(b.description);
  return out;
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

std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& options) {
  if (options.processes == nullptr)
    return make_kind(resolve_backend_kind(kind, options.mesh, options.log), options);
  // One rank per process: auto picks cuda when this process sees a GPU (each process drives one).
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
  return make_kind(kind, options);
}

}  // namespace meshscope::runtime
