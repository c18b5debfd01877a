// The entry points the backend factory calls: GPU count (never throws) and the two backends, and
// the table through which the GPU module exports them.
#include "profiler/runtime/cuda_entry.h"

#include "kernels/cuda/device.h"
#include "profiler/runtime/cuda/nccl_backend.h"
#include "profiler/runtime/cuda/virtual_backend.h"

namespace meshscope::runtime::cuda {

int usable_gpu_count(std::string* why_none) {
  const kernels::cuda::DeviceProbe probe = kernels::cuda::probe_devices();
  if (!probe.available() && why_none != nullptr)
    *why_none = kernels::cuda::no_device_message(probe);
  return static_cast<int>(probe.devices.size());
}

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<CudaNcclBackend>(options);
}

std::unique_ptr<Backend> make_cuda_virtual_backend(const BackendOptions& options) {
  return std::make_unique<CudaVirtualBackend>(options);
}

}  // namespace meshscope::runtime::cuda

extern "C" __attribute__((visibility("default"))) const meshscope::runtime::cuda::CudaBackendEntry*
meshscope_cuda_backends() {
  using namespace meshscope::runtime::cuda;
  static const CudaBackendEntry entry{.usable_gpu_count = usable_gpu_count,
                                      .make_cuda_backend = make_cuda_backend,
                                      .make_cuda_virtual_backend = make_cuda_virtual_backend};
  return &entry;
}
