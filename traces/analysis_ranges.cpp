// Annotation ranges grouped by name and place, ranked by total time (analysis_ranges.h).
#include "traces/analysis_ranges.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "traces/analysis.h"

namespace meshscope::traces {

RangeSummary range_summary(const Timeline& t, size_t top_n) {
  std::unordered_map<uint64_t, std::vector<int64_t>> durations;  // (name, on) -> durations
  RangeSummary out;
  for (const Span& s : t.spans) {
    if (s.kind != SpanKind::kAnnotation || s.device >= t.devices.size()) continue;
    const auto& lanes = t.devices[s.device].lanes;
    const bool on_device = s.lane < lanes.size() && lanes[s.lane].kind != LaneKind::kHost;
    durations[(uint64_t{s.name} << 1) | (on_device ? 1 : 0)].push_back(s.duration_ns());
    ++out.instances;
    out.total_ns += s.duration_ns();
  }
  out.names = static_cast<int64_t>(durations.size());
  std::vector<RangeStat> rows;
  rows.reserve(durations.size());
  for (auto& [key, d] : durations) {
    RangeStat r;
    r.name = std::string(t.strings.get(static_cast<uint32_t>(key >> 1)));
    r.on_device = (key & 1) != 0;
    r.instances = static_cast<int64_t>(d.size());
    for (const int64_t x : d) r.total_ns += x;
    std::sort(d.begin(), d.end());
    r.min_ns = d.front();
    r.max_ns = d.back();
    r.median_ns = d[(d.size() - 1) / 2];
    r.mean_ns = static_cast<double>(r.total_ns) / static_cast<double>(d.size());
    r.share = out.total_ns > 0 ? static_cast<double>(r.total_ns) / out.total_ns : 0.0;
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const RangeStat& a, const RangeStat& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.on_device < b.on_device;
  });
  if (rows.size() > top_n) rows.resize(top_n);
  out.top = std::move(rows);
  return out;
}

nlohmann::json to_json(const RangeSummary& r) {
  nlohmann::json top = nlohmann::json::array();
  for (const RangeStat& s : r.top) {
    top.push_back({{"name", s.name},
                   {"on", s.on_device ? "device" : "host"},
                   {"instances", s.instances},
                   {"total_ns", s.total_ns},
                   {"share", s.share},
                   {"mean_ns", s.mean_ns},
                   {"median_ns", s.median_ns},
                   {"min_ns", s.min_ns},
                   {"max_ns", s.max_ns}});
  }
  return {{"instances", r.instances}, {"names", r.names}, {"total_ns", r.total_ns}, {"top", top}};
}

std::string format_range_table(const RangeSummary& r) {
  if (r.instances == 0) return "annotation ranges: none in the trace\n";
  std::string out =
      "annotation ranges (NVTX, record_function; as nsys stats' nvtx_sum, the whole "
      "trace): " +
      std::to_string(r.instances) + " instances of " + std::to_string(r.names) + " names, " +
      format_duration(r.total_ns) + " in all (nested ones each count)\n";
  out +=
      "  time %        total  instances         mean       median          min          max  "
      "on      range\n";
  for (const RangeStat& s : r.top) {
    const std::string n = s.name.size() > 70 ? s.name.substr(0, 67) + "..." : s.name;
    char line[400];
    std::snprintf(line, sizeof line, "  %5.1f%%  %11s  %9lld  %11s  %11s  %11s  %11s  %-6s  %s\n",
                  100.0 * s.share, format_duration(s.total_ns).c_str(),
                  static_cast<long long>(s.instances),
                  format_duration(static_cast<int64_t>(s.mean_ns + 0.5)).c_str(),
                  format_duration(s.median_ns).c_str(), format_duration(s.min_ns).c_str(),
                  format_duration(s.max_ns).c_str(), s.on_device ? "device" : "host", n.c_str());
    out += line;
  }
  if (r.names > static_cast<int64_t>(r.top.size()))
    out += "  (" + std::to_string(r.names - static_cast<int64_t>(r.top.size())) +
           " more names: a larger --ranges N lists them)\n";
  return out;
}

}  // namespace meshscope::traces
