// Groups span indices by device and packs one device's spans for the analysis sweeps.
#include "traces/analysis_spans.h"

#include <stdexcept>
#include <string>

namespace meshscope::traces::detail {

std::vector<std::vector<uint32_t>> spans_by_device(const Timeline& t) {
  std::vector<std::vector<uint32_t>> out(t.devices.size());
  for (size_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (s.kind == SpanKind::kIdle) continue;
    if (s.device >= t.devices.size()) {
      throw std::out_of_range("timeline: span " + std::to_string(i) + " names device " +
                              std::to_string(s.device) + " but there are " +
                              std::to_string(t.devices.size()) + " devices");
    }
    out[s.device].push_back(static_cast<uint32_t>(i));
  }
  return out;
}

std::vector<SpanRec> device_records(const Timeline& t, const std::vector<uint32_t>& indices) {
  std::vector<SpanRec> recs;
  recs.reserve(indices.size());
  for (uint32_t i : indices) {
    const Span& s = t.spans[i];
    if (s.end_ns <= s.begin_ns) continue;
    recs.push_back({s.begin_ns, s.end_ns, i, s.kind, s.phase});
  }
  const auto by_begin = [](const SpanRec& a, const SpanRec& b) { return a.begin_ns < b.begin_ns; };
  // Producers usually emit spans in time order; skip the sort when they did.
  if (!std::is_sorted(recs.begin(), recs.end(), by_begin)) {
    std::stable_sort(recs.begin(), recs.end(), by_begin);
  }
  return recs;
}

}  // namespace meshscope::traces::detail
