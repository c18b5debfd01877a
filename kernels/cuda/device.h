// Whether a CUDA device can be used here, and if not, why: the one question every GPU path asks
// before touching the device (tests skip on it, `--backend auto` falls back on it).
#pragma once

#include <string>
#include <vector>

namespace meshscope::kernels::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;            // "NVIDIA H200"
  int sm_count = 0;            // streaming multiprocessors
  int compute_capability = 0;  // 90 for sm_90
  size_t memory_bytes = 0;
};

struct DeviceProbe {
  std::vector<DeviceInfo> devices;  // empty when no device can be used
  std::string reason;               // why none can: the runtime's own error, e.g. no driver
  bool available() const { return !devices.empty(); }
};

// Never throws; cheap enough to call once per process.
DeviceProbe probe_devices();

// "no CUDA device: <reason>" — the message every GPU path gives when there is none.
std::string no_device_message(const DeviceProbe& probe);

}  // namespace meshscope::kernels::cuda
