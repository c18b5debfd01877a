// Groups span indices by device and packs one device's spans for the analysis sweeps.
#include "traces/analysis_spans.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

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

// A key's compute spans are searched one by one: a stage's microbatch has one span of a phase per
// step (per chunk and step, interleaved), so the search is short.
std::vector<uint32_t> issued_collective_spans(const Timeline& t, const std::vector<SpanRec>& recs) {
  if (t.run.source != RunSource::kCpu) return {};
  using Key = std::tuple<int16_t, int32_t, Phase>;
  std::map<Key, std::vector<Interval>> computing;  // each sorted by begin, as recs are
  for (const SpanRec& r : recs) {
    const Span& s = t.spans[r.index];
    if (r.kind == SpanKind::kCompute && s.stage >= 0 && s.microbatch >= 0)
      computing[{s.stage, s.microbatch, r.phase}].push_back({r.begin_ns, r.end_ns});
  }
  std::vector<uint32_t> issued;
  for (const SpanRec& r : recs) {
    const Span& s = t.spans[r.index];
    if (r.kind != SpanKind::kCollective || s.stage < 0 || s.microbatch < 0) continue;
    const auto it = computing.find({s.stage, s.microbatch, r.phase});
    if (it == computing.end()) continue;
    const int64_t reached = t.reached_ns(r.index);
    const bool inside = std::any_of(it->second.begin(), it->second.end(), [&](const Interval& c) {
      return c.begin_ns <= reached && r.end_ns <= c.end_ns;
    });
    if (inside) issued.push_back(r.index);
  }
  return issued;
}

IntervalSet issued_collectives(const Timeline& t, const std::vector<SpanRec>& recs) {
  std::vector<Interval> issued;
  for (uint32_t i : issued_collective_spans(t, recs))
    issued.push_back({t.reached_ns(i), t.spans[i].end_ns});
  return merge_intervals(std::move(issued));
}

IntervalSet compute_less_issued(const std::vector<SpanRec>& recs, const IntervalSet& issued) {
  return subtract(union_of(recs, [](const SpanRec& r) { return r.kind == SpanKind::kCompute; }),
                  issued);
}

IntervalSet busy_less_issued(const std::vector<SpanRec>& recs, const IntervalSet& compute) {
  IntervalSet busy = union_of(recs, [](const SpanRec& r) {
    return is_device_activity(r.kind) && r.kind != SpanKind::kCompute;
  });
  busy.insert(busy.end(), compute.begin(), compute.end());
  return merge_intervals(std::move(busy));
}

}  // namespace meshscope::traces::detail
