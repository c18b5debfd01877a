// Shared finishing steps of the Chrome and Nsight importers.
#include "traces/import/import_common.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "traces/printable.h"

namespace meshscope::traces::importer {

void extend_steps_by_launches(Timeline& t, ImportReport& report,
                              const std::vector<DroppedLaunch>& dropped) {
  const std::vector<StepWindow> host = t.steps;
  const auto extend = [&](int64_t call_ns, int64_t begin_ns, int64_t end_ns,
                          std::string_view what) {
    if (begin_ns < call_ns - kLaunchBeforeCallToleranceNs) {
      report.warn_at(ImportWarning::kDeviceBeforeLaunch,
                     "'" + printable(what, 48) + "' at " + std::to_string(begin_ns) +
                         " ns, launched at " + std::to_string(call_ns) + " ns");
      return;
    }
    if (host.empty()) return;
    auto it = std::upper_bound(host.begin(), host.end(), call_ns,
                               [](int64_t ts, const StepWindow& w) { return ts < w.begin_ns; });
    if (it == host.begin()) return;
    --it;
    if (call_ns > it->end_ns) return;
    StepWindow& w = t.steps[static_cast<size_t>(it - host.begin())];
    w.begin_ns = std::min(w.begin_ns, begin_ns);
    w.end_ns = std::max(w.end_ns, end_ns);
  };
  for (const Flow& f : t.flows) {
    const Span& from = t.spans[f.from];
    const Span& to = t.spans[f.to];
    if (from.kind != SpanKind::kHost || !is_device_activity(to.kind)) continue;
    extend(from.begin_ns, to.begin_ns, to.end_ns, t.span_name(to));
  }
  for (const DroppedLaunch& l : dropped)
    extend(l.host_begin_ns, l.device_begin_ns, l.device_end_ns, t.strings.get(l.device_name));
}

void mark_comm_lanes(Timeline& t, const std::vector<bool>& device_is_gpu) {
  // Per lane: 1 carries communication, 2 carries compute (a stream that runs both stays compute).
  std::vector<std::vector<uint8_t>> seen(t.devices.size());
  for (size_t d = 0; d < t.devices.size(); ++d) seen[d].assign(t.devices[d].lanes.size(), 0);
  for (const Span& s : t.spans) {
    if (s.device >= device_is_gpu.size() || !device_is_gpu[s.device]) continue;
    if (is_communication(s.kind)) seen[s.device][s.lane] |= 1;
    if (s.kind == SpanKind::kCompute) seen[s.device][s.lane] |= 2;
  }
  for (size_t d = 0; d < t.devices.size(); ++d) {
    for (size_t l = 0; l < seen[d].size(); ++l) {
      if (seen[d][l] == 1) t.devices[d].lanes[l].kind = LaneKind::kComm;
    }
  }
}

void note_warnings(Timeline& t, const ImportReport& report) {
  if (report.total_warnings() == 0) return;
  std::string all;
  for (const std::string& line : report.lines()) all += (all.empty() ? "" : "; ") + line;
  t.metadata["import_warnings"] = all;
}

size_t drop_devices_without_spans(Timeline& t, ImportReport& report) {
  std::vector<bool> used(t.devices.size(), false);
  for (const Span& s : t.spans) used[s.device] = true;
  if (std::find(used.begin(), used.end(), false) == used.end()) return 0;
  std::vector<uint16_t> new_index(t.devices.size(), 0);
  std::vector<Device> kept;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    if (!used[d]) continue;
    new_index[d] = static_cast<uint16_t>(kept.size());
    kept.push_back(std::move(t.devices[d]));
  }
  const size_t removed = t.devices.size() - kept.size();
  t.devices = std::move(kept);
  for (Span& s : t.spans) s.device = new_index[s.device];
  std::string first;
  const auto dropped = std::erase_if(t.counters, [&](const Counter& c) {
    if (used[c.device]) return false;
    if (first.empty()) first = "counter \"" + c.name + "\"";
    return true;
  });
  if (dropped > 0) report.warn_at(ImportWarning::kCounterWithoutSpans, first, dropped);
  for (Counter& c : t.counters) c.device = new_index[c.device];
  return removed;
}

}  // namespace meshscope::traces::importer
