// The entry points the backend factory calls: GPU count (never throws) and the module's backends
// (the rows of MESHSCOPE_GPU_MODULE_BACKENDS, backend_table.h), and the table through which the
// GPU module exports them.
#include "profiler/runtime/cuda_entry.h"

#include <stdexcept>

#include "kernels/cuda/device.h"

namespace meshscope::runtime::cuda {

int usable_gpu_count(std::string* why_none) {
  const kernels::cuda::DeviceProbe probe = kernels::cuda::probe_devices();
  if (!probe.available() && why_none != nullptr)
    *why_none = kernels::cuda::no_device_message(probe);
  return static_cast<int>(probe.devices.size());
}

std::unique_ptr<Backend> make_module_backend(BackendKind kind, const BackendOptions& options) {
  switch (kind) {
#define MESHSCOPE_MODULE_BACKEND_CASE(kind, name, maker, description) \
  case BackendKind::kind:                                             \
    return maker(options);
    MESHSCOPE_GPU_MODULE_BACKENDS(MESHSCOPE_MODULE_BACKEND_CASE)
#undef MESHSCOPE_MODULE_BACKEND_CASE
    default:
      break;
  }
  throw std::runtime_error("backend '" + std::string(name(kind)) + "' is not in " + kGpuModuleFile);
}

}  // namespace meshscope::runtime::cuda

extern "C" __attribute__((visibility("default"))) const meshscope::runtime::cuda::CudaBackendEntry*
meshscope_cuda_backends() {
  using namespace meshscope::runtime::cuda;
  static const CudaBackendEntry entry{.usable_gpu_count = usable_gpu_count,
                                      .make_backend = make_module_backend};
  return &entry;
}
