// Kernel breakdown: group each device's activity by name, rank by total time.
#include "traces/analysis_kernels.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "traces/analysis.h"

namespace meshscope::traces {
namespace {

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
  return buf;
}

}  // namespace

KernelClass kernel_class(SpanKind kind) {
  if (is_communication(kind)) return KernelClass::kCommunication;
  if (kind == SpanKind::kMemcpy || kind == SpanKind::kMemset) return KernelClass::kMemory;
  return KernelClass::kCompute;
}

std::vector<DeviceKernels> kernel_breakdown(const Timeline& t, size_t top_n) {
  std::vector<std::unordered_map<uint64_t, KernelStat>> by_device(t.devices.size());
  std::vector<DeviceKernels> dev(t.devices.size());
  for (const Span& s : t.spans) {
    if (!is_device_activity(s.kind) || s.device >= t.devices.size()) continue;
    const KernelClass cls = kernel_class(s.kind);
    // One entry per (name, class): the same name as compute and as a transfer stays apart.
    const uint64_t key = (uint64_t{s.name} << 8) | static_cast<uint64_t>(cls);
    KernelStat& k = by_device[s.device][key];
    if (k.count == 0) {
      k.name = std::string(t.span_name(s));
      k.cls = cls;
    }
    ++k.count;
    k.total_ns += s.duration_ns();
    k.max_ns = std::max(k.max_ns, s.duration_ns());
    dev[s.device].kernel_time_ns += s.duration_ns();
    dev[s.device].class_ns[static_cast<size_t>(cls)] += s.duration_ns();
  }
  std::vector<DeviceKernels> out;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    if (by_device[d].empty()) continue;
    DeviceKernels k = std::move(dev[d]);
    k.device = static_cast<uint16_t>(d);
    k.rank = t.devices[d].rank;
    k.name = t.devices[d].name;
    for (auto& [key, stat] : by_device[d]) {
      stat.share =
          k.kernel_time_ns > 0 ? static_cast<double>(stat.total_ns) / k.kernel_time_ns : 0.0;
      k.top.push_back(std::move(stat));
    }
    std::sort(k.top.begin(), k.top.end(), [](const KernelStat& a, const KernelStat& b) {
      if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
      return a.name < b.name;
    });
    if (k.top.size() > top_n) k.top.resize(top_n);
    out.push_back(std::move(k));
  }
  return out;
}

nlohmann::json to_json(const std::vector<DeviceKernels>& ks) {
  nlohmann::json out = nlohmann::json::array();
  for (const DeviceKernels& k : ks) {
    nlohmann::json classes;
    for (size_t c = 0; c < k.class_ns.size(); ++c) {
      classes[std::string(kKernelClassNames[c]) + "_ns"] = k.class_ns[c];
    }
    nlohmann::json top = nlohmann::json::array();
    for (const KernelStat& s : k.top) {
      top.push_back({{"name", s.name},
                     {"class", name(s.cls)},
                     {"count", s.count},
                     {"total_ns", s.total_ns},
                     {"max_ns", s.max_ns},
                     {"share", s.share}});
    }
    out.push_back({{"device", k.device},
                   {"rank", k.rank},
                   {"name", k.name},
                   {"kernel_time_ns", k.kernel_time_ns},
                   {"classes", classes},
                   {"top", top}});
  }
  return out;
}

std::string format_kernel_table(const std::vector<DeviceKernels>& ks) {
  std::string out = "kernels (share = % of the device's summed kernel time):\n";
  for (const DeviceKernels& k : ks) {
    const auto share = [&](KernelClass c) {
      return k.kernel_time_ns > 0
                 ? pct(static_cast<double>(k.class_ns[static_cast<size_t>(c)]) / k.kernel_time_ns)
                 : std::string("-");
    };
    out += "  " + k.name + ": kernel time " + format_duration(k.kernel_time_ns) + " — compute " +
           share(KernelClass::kCompute) + ", communication " + share(KernelClass::kCommunication) +
           ", memory " + share(KernelClass::kMemory) + "\n";
    for (const KernelStat& s : k.top) {
      std::string n = s.name.size() > 70 ? s.name.substr(0, 67) + "..." : s.name;
      char line[256];
      std::snprintf(line, sizeof line, "    %6s  %12s  %6lld×  %-13s  %s\n", pct(s.share).c_str(),
                    format_duration(s.total_ns).c_str(), static_cast<long long>(s.count),
                    std::string(name(s.cls)).c_str(), n.c_str());
      out += line;
    }
  }
  return out;
}

}  // namespace meshscope::traces
