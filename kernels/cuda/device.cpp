// Probes the CUDA runtime for devices without assuming a driver is installed.
#include "kernels/cuda/device.h"

#include <cuda_runtime_api.h>

namespace meshscope::kernels::cuda {

DeviceProbe probe_devices() {
  DeviceProbe probe;
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    probe.reason = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
    (void)cudaGetLastError();
    return probe;
  }
  if (count == 0) {
    probe.reason = "the CUDA runtime reports 0 devices";
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    probe.devices.push_back({i, prop.name, prop.multiProcessorCount, prop.major * 10 + prop.minor,
                             prop.totalGlobalMem});
  }
  if (probe.devices.empty()) probe.reason = "cudaGetDeviceProperties failed on every device";
  return probe;
}

std::string no_device_message(const DeviceProbe& probe) {
  return "no CUDA device: " + probe.reason;
}

}  // namespace meshscope::kernels::cuda
