// Groups span indices by device for the per-device sweeps of the analysis.
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

}  // namespace meshscope::traces::detail
