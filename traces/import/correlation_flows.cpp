// Correlation-id launch flows: pair host calls and GPU activity by id, then keep only the pairs
// the trace's own flow events did not already link.
#include "traces/import/correlation_flows.h"

#include <unordered_map>
#include <unordered_set>

namespace meshscope::traces::importer {

size_t add_correlation_flows(Timeline& t, const std::vector<CorrelationEnd>& ends) {
  std::unordered_map<int64_t, uint32_t> host_of;
  for (const CorrelationEnd& e : ends) {
    if (!e.gpu) host_of[e.correlation] = e.span;
  }
  std::vector<Flow> added;
  for (const CorrelationEnd& e : ends) {
    if (!e.gpu) continue;
    const auto it = host_of.find(e.correlation);
    if (it != host_of.end()) added.push_back({it->second, e.span});
  }
  t.flows.insert(t.flows.begin(), added.begin(), added.end());
  return added.size();
}

void drop_redundant_correlation_flows(Timeline& t, size_t count) {
  if (count == 0) return;
  std::unordered_set<uint32_t> launched;  // GPU spans a flow event links from a host span
  for (size_t i = count; i < t.flows.size(); ++i) {
    const Flow& f = t.flows[i];
    if (f.from < t.spans.size() && t.spans[f.from].kind == SpanKind::kHost) launched.insert(f.to);
  }
  size_t kept = 0;
  for (size_t i = 0; i < t.flows.size(); ++i) {
    if (i < count && launched.count(t.flows[i].to) != 0) continue;
    t.flows[kept++] = t.flows[i];
  }
  t.flows.resize(kept);
}

}  // namespace meshscope::traces::importer
