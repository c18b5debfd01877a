// N virtual devices on one GPU: each a green context holding an equal share of the SMs, with a
// compute and a communication stream inside it; plain streams where green contexts are refused
// (old driver, too few SMs per share, green_contexts = false), with the reason kept.
#pragma once

#include <cuda.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/cuda/raii.h"
#include "profiler/runtime/cuda/driver_api.h"

namespace meshscope::runtime::cuda {

struct VirtualDevice {
  CUgreenCtx green = nullptr;   // owned by VirtualDevices; null with plain streams
  CUcontext context = nullptr;  // the green context as a CUcontext, made current on the rank
  kernels::cuda::Stream compute;
  kernels::cuda::Stream comm;
};

class VirtualDevices {
 public:
  // Throws std::runtime_error when even plain streams cannot be made.
  VirtualDevices(int gpu, int count, bool want_green, std::ostream* log);
  ~VirtualDevices();
  VirtualDevices(const VirtualDevices&) = delete;
  VirtualDevices& operator=(const VirtualDevices&) = delete;

  VirtualDevice& operator[](int i) { return devices_[i]; }
  const VirtualDevice& operator[](int i) const { return devices_[i]; }
  int size() const { return static_cast<int>(devices_.size()); }
  bool green() const { return green_; }
  int sms_each() const { return sms_each_; }
  int sms_total() const { return sms_total_; }  // the GPU's SMs, as the driver reported them
  const std::string& fallback_reason() const { return fallback_reason_; }
  // Makes the virtual device's context current on the calling thread (no-op for plain streams).
  void make_current(int i) const;

 private:
  // Returns false with fallback_reason_ set when the driver refuses.
  bool try_green(int gpu, int count);

  std::optional<DriverApi> api_;
  int gpu_ = 0;
  std::vector<VirtualDevice> devices_;
  bool green_ = false;
  int sms_each_ = 0;
  int sms_total_ = 0;
  std::string fallback_reason_;
};

}  // namespace meshscope::runtime::cuda
