// Rebuilds NVTX ranges from marker records and resolves correlation ids to actions.
#include "profiler/capture/cupti/labeler.h"

#include <algorithm>

namespace meshscope::capture::cupti {

RecordLabeler::RecordLabeler(const RecordSet& records, std::string_view domain) : domain_(domain) {
  for (const auto& link : records.links) external_[link.correlation] = link.external_id;
  for (const auto& call : records.api_calls)
    calls_[call.correlation] = {call.thread, call.begin_ns};

  std::unordered_map<uint32_t, uint64_t> payloads;
  for (const auto& p : records.payloads) payloads[p.id] = p.value;
  // Pair starts with ends by marker id; buffers may arrive in any order, so collect both first.
  std::unordered_map<uint32_t, const MarkerEvent*> starts, ends;
  for (const auto& m : records.markers) {
    if (m.edge == MarkerEvent::Edge::kStart) starts[m.id] = &m;
    if (m.edge == MarkerEvent::Edge::kEnd) ends[m.id] = &m;
  }
  for (const auto& [id, start] : starts) {
    auto end = ends.find(id);
    if (end == ends.end()) {
      ++unmatched_;
      continue;
    }
    NvtxRange r{start->t_ns, end->second->t_ns, start->thread, start->name, start->domain, {}};
    if (auto p = payloads.find(id); p != payloads.end()) r.payload = p->second;
    all_ranges_.push_back(std::move(r));
  }
  for (const auto& [id, end] : ends) {
    if (!starts.count(id)) ++unmatched_;
  }
  std::sort(all_ranges_.begin(), all_ranges_.end(), [](const NvtxRange& a, const NvtxRange& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.begin_ns < b.begin_ns;
  });
  for (size_t i = 0; i < all_ranges_.size(); ++i) {
    const auto& r = all_ranges_[i];
    if (r.domain == domain_ && r.payload && decode_external_id(*r.payload)) {
      by_thread_[r.thread].push_back(i);
    }
  }
}

std::optional<ExternalKey> RecordLabeler::enclosing_action(uint32_t thread, int64_t t_ns) const {
  auto it = by_thread_.find(thread);
  if (it == by_thread_.end()) return std::nullopt;
  const auto& idx = it->second;
  // Ranges of one thread nest, so the latest-beginning range that still covers t is innermost.
  auto upper = std::upper_bound(idx.begin(), idx.end(), t_ns,
                                [&](int64_t t, size_t i) { return t < all_ranges_[i].begin_ns; });
  while (upper != idx.begin()) {
    --upper;
    const auto& r = all_ranges_[*upper];
    if (r.end_ns >= t_ns) return decode_external_id(*r.payload);
  }
  return std::nullopt;
}

Label RecordLabeler::label(uint32_t correlation) const {
  Label out;
  auto call = calls_.find(correlation);
  if (call != calls_.end()) out.thread = call->second.thread;
  if (auto ext = external_.find(correlation); ext != external_.end()) {
    if (auto key = decode_external_id(ext->second)) {
      out.key = key;
      out.source = LabelSource::kExternalId;
      return out;
    }
  }
  if (call != calls_.end()) {
    if (auto key = enclosing_action(call->second.thread, call->second.begin_ns)) {
      out.key = key;
      out.source = LabelSource::kNvtx;
    }
  }
  return out;
}

}  // namespace meshscope::capture::cupti
