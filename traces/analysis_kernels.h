// Kernel breakdown: per device, the kernels (GPU activity by name) that took the most time, their
// share of the device's kernel time, and the split into compute, communication and memory.
//
//   kernel time  Σ durations of the device's device-activity spans (timeline.h
//                is_device_activity), not their union: two overlapping kernels both count, as in
//                HTA's kernel breakdown, so shares add up to 100%.
//   class        compute (kCompute), communication (kSend, kRecv, kCollective), memory (kMemcpy,
//                kMemset).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/timeline.h"

namespace meshscope::traces {

enum class KernelClass : uint8_t { kCompute = 0, kCommunication, kMemory, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(KernelClass::kCount)>
    kKernelClassNames = {"compute", "communication", "memory"};
constexpr std::string_view name(KernelClass c) { return kKernelClassNames[static_cast<size_t>(c)]; }
KernelClass kernel_class(SpanKind kind);  // for device-activity kinds

struct KernelStat {
  std::string name;
  KernelClass cls = KernelClass::kCompute;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  double share = 0;  // total_ns / the device's kernel time
};

struct DeviceKernels {
  uint16_t device = 0;
  int rank = 0;
  std::string name;
  int64_t kernel_time_ns = 0;
  std::array<int64_t, static_cast<size_t>(KernelClass::kCount)> class_ns{};
  std::vector<KernelStat> top;  // by total_ns, descending (ties by name)
};

// Devices with device activity, in device order; `top` keeps the `top_n` largest kernels.
std::vector<DeviceKernels> kernel_breakdown(const Timeline& t, size_t top_n = 10);

nlohmann::json to_json(const std::vector<DeviceKernels>& k);
std::string format_kernel_table(const std::vector<DeviceKernels>& k);

}  // namespace meshscope::traces
