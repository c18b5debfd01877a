// Timeline construction helpers, the string table and the kind/phase name lookups.
#include "traces/timeline.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "traces/enum_names.h"

namespace meshscope::traces {

std::optional<SpanKind> parse_span_kind(std::string_view s) {
  return parse_enum<SpanKind>(kSpanKindNames, s);
}
std::optional<Phase> parse_phase(std::string_view s) { return parse_enum<Phase>(kPhaseNames, s); }
std::optional<LaneKind> parse_lane_kind(std::string_view s) {
  return parse_enum<LaneKind>(kLaneKindNames, s);
}

StringTable::StringTable() { intern(""); }

uint32_t StringTable::intern(std::string_view s) {
  auto it = index_.find(std::string(s));
  if (it != index_.end()) return it->second;
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(strings_.back(), id);
  return id;
}

uint32_t ArgsStore::add(std::string_view members) {
  if (members.empty()) return 0;
  if (ends_.size() >= UINT32_MAX) throw std::length_error("timeline: too many origin args");
  bytes_.append(members);
  ends_.push_back(bytes_.size());
  return static_cast<uint32_t>(ends_.size() - 1);
}

bool ArgsStore::assign(std::string bytes, std::vector<uint64_t> ends) {
  if (ends.empty() || ends.front() != 0 || ends.back() != bytes.size() ||
      ends.size() > UINT32_MAX || !std::is_sorted(ends.begin(), ends.end())) {
    return false;
  }
  bytes_ = std::move(bytes);
  ends_ = std::move(ends);
  return true;
}

uint16_t Timeline::add_device(int rank, std::string name, MeshCoord coord) {
  if (devices.size() >= UINT16_MAX) throw std::length_error("timeline: too many devices");
  devices.push_back(Device{rank, std::move(name), coord, {}});
  return static_cast<uint16_t>(devices.size() - 1);
}

uint16_t Timeline::add_lane(uint16_t device, std::string name, LaneKind kind) {
  auto& lanes = devices.at(device).lanes;
  if (lanes.size() >= UINT16_MAX) throw std::length_error("timeline: too many lanes");
  lanes.push_back(Lane{std::move(name), kind});
  return static_cast<uint16_t>(lanes.size() - 1);
}

uint32_t Timeline::add_span(const Span& span) {
  if (spans.size() >= UINT32_MAX) throw std::length_error("timeline: too many spans");
  spans.push_back(span);
  return static_cast<uint32_t>(spans.size() - 1);
}

void Timeline::sort_spans() {
  std::vector<uint32_t> order(spans.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return canonical_before(spans[a], spans[b]); });
  std::vector<uint32_t> new_index(spans.size());
  std::vector<Span> sorted;
  sorted.reserve(spans.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = i;
    sorted.push_back(spans[order[i]]);
  }
  spans = std::move(sorted);
  for (Flow& f : flows) {
    f.from = new_index[f.from];
    f.to = new_index[f.to];
  }
  // --- side table: collectives (remapped, then re-sorted by span) ---
  for (SpanCollective& c : collectives) c.span = new_index[c.span];
  std::sort(collectives.begin(), collectives.end(),
            [](const SpanCollective& a, const SpanCollective& b) { return a.span < b.span; });
  // --- end side table: collectives ---
  for (SpanWait& w : waits) w.span = new_index[w.span];
  std::sort(waits.begin(), waits.end(),
            [](const SpanWait& a, const SpanWait& b) { return a.span < b.span; });
  // --- origins: follow their spans, stay sorted by span ---
  for (SpanOrigin& o : origins) o.span = new_index[o.span];
  std::sort(origins.begin(), origins.end(),
            [](const SpanOrigin& a, const SpanOrigin& b) { return a.span < b.span; });
  // --- end origins ---
}

void Timeline::set_collective(uint32_t span, const Collective& c) {
  if (collectives.empty() || collectives.back().span < span) {
    collectives.push_back({span, c});  // producers add spans in order: the common case
    return;
  }
  auto it = std::lower_bound(collectives.begin(), collectives.end(), span,
                             [](const SpanCollective& x, uint32_t s) { return x.span < s; });
  if (it != collectives.end() && it->span == span) {
    it->collective = c;
  } else {
    collectives.insert(it, {span, c});
  }
}

const Collective* Timeline::collective_of(uint32_t span) const {
  auto it = std::lower_bound(collectives.begin(), collectives.end(), span,
                             [](const SpanCollective& x, uint32_t s) { return x.span < s; });
  return it != collectives.end() && it->span == span ? &it->collective : nullptr;
}

void Timeline::set_wait(uint32_t span, int64_t wait_ns) {
  if (wait_ns <= 0) return;
  if (waits.empty() || waits.back().span < span) {
    waits.push_back({span, wait_ns});  // producers add spans in order: the common case
    return;
  }
  auto it = std::lower_bound(waits.begin(), waits.end(), span,
                             [](const SpanWait& x, uint32_t s) { return x.span < s; });
  if (it != waits.end() && it->span == span) {
    it->wait_ns = wait_ns;
  } else {
    waits.insert(it, {span, wait_ns});
  }
}

int64_t Timeline::reached_ns(uint32_t span) const {
  auto it = std::lower_bound(waits.begin(), waits.end(), span,
                             [](const SpanWait& x, uint32_t s) { return x.span < s; });
  const int64_t begin = spans[span].begin_ns;
  return it != waits.end() && it->span == span ? begin - it->wait_ns : begin;
}

const SpanOrigin* Timeline::origin_of(uint32_t index) const {
  const auto it =
      std::lower_bound(origins.begin(), origins.end(), index,
                       [](const SpanOrigin& o, uint32_t span) { return o.span < span; });
  return it != origins.end() && it->span == index ? &*it : nullptr;
}

StepWindow Timeline::extent() const {
  if (spans.empty()) return {};
  StepWindow w{spans.front().begin_ns, spans.front().end_ns};
  for (const Span& s : spans) {
    w.begin_ns = std::min(w.begin_ns, s.begin_ns);
    w.end_ns = std::max(w.end_ns, s.end_ns);
  }
  return w;
}

}  // namespace meshscope::traces
