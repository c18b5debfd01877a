// Appending one Timeline to another (see timeline_merge.h).
#include "traces/timeline_merge.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshscope::traces {
namespace {

int64_t moved(int64_t ns, int64_t shift, int64_t limit) {
  int64_t out = 0;
  if (__builtin_add_overflow(ns, shift, &out) || out > limit || out < -limit) {
    throw std::out_of_range("a time of " + std::to_string(ns) + " ns shifted by " +
                            std::to_string(shift) + " ns leaves ±" + std::to_string(limit) + " ns");
  }
  return out;
}

}  // namespace

void append_timeline(Timeline& out, const Timeline& part, std::span<const int> device_map,
                     int64_t shift_ns, int64_t limit_ns) {
  if (device_map.size() != part.devices.size()) {
    throw std::invalid_argument("append_timeline: device map of " +
                                std::to_string(device_map.size()) + " for " +
                                std::to_string(part.devices.size()) + " devices");
  }
  for (int d : device_map) {
    if (d >= static_cast<int>(out.devices.size())) {
      throw std::invalid_argument("append_timeline: device " + std::to_string(d) +
                                  " is not laid out");
    }
  }
  if (out.spans.size() + part.spans.size() > UINT32_MAX) {
    throw std::length_error("more than 2^32 spans");
  }
  std::vector<uint32_t> names(part.strings.size());
  for (uint32_t i = 0; i < part.strings.size(); ++i)
    names[i] = out.strings.intern(part.strings.get(i));

  constexpr uint32_t kDropped = UINT32_MAX;
  std::vector<uint32_t> index(part.spans.size(), kDropped);
  out.spans.reserve(out.spans.size() + part.spans.size());
  for (size_t i = 0; i < part.spans.size(); ++i) {
    Span s = part.spans[i];
    const int d = device_map[s.device];
    if (d < 0) continue;
    s.device = static_cast<uint16_t>(d);
    s.begin_ns = moved(s.begin_ns, shift_ns, limit_ns);
    s.end_ns = moved(s.end_ns, shift_ns, limit_ns);
    s.name = names[s.name];
    index[i] = static_cast<uint32_t>(out.spans.size());
    out.spans.push_back(s);
  }
  for (const SpanCollective& c : part.collectives) {
    if (index[c.span] != kDropped) out.set_collective(index[c.span], c.collective);
  }
  for (const SpanWait& w : part.waits) {
    if (index[w.span] != kDropped) out.set_wait(index[w.span], w.wait_ns);
  }
  for (SpanOrigin o : part.origins) {
    if (index[o.span] == kDropped) continue;
    o.span = index[o.span];
    o.category = names[o.category];
    o.args = out.origin_args.add(part.origin_args.get(o.args));
    out.origins.push_back(o);
  }
  for (const Flow& f : part.flows) {
    if (index[f.from] != kDropped && index[f.to] != kDropped)
      out.add_flow(index[f.from], index[f.to], names[f.category]);
  }
  for (const Counter& c : part.counters) {
    const int d = device_map[c.device];
    if (d < 0) continue;
    Counter copy = c;
    copy.device = static_cast<uint16_t>(d);
    for (CounterSample& s : copy.samples) s.t_ns = moved(s.t_ns, shift_ns, limit_ns);
    out.counters.push_back(std::move(copy));
  }
  for (size_t k = 0; k < part.steps.size(); ++k) {
    const StepWindow w{moved(part.steps[k].begin_ns, shift_ns, limit_ns),
                       moved(part.steps[k].end_ns, shift_ns, limit_ns)};
    if (k >= out.steps.size()) {
      out.steps.push_back(w);
    } else {
      out.steps[k].begin_ns = std::min(out.steps[k].begin_ns, w.begin_ns);
      out.steps[k].end_ns = std::max(out.steps[k].end_ns, w.end_ns);
    }
  }
}

std::vector<std::pair<int, Timeline>> split_by_rank(const Timeline& t) {
  std::set<int> ranks;
  for (const Device& d : t.devices) ranks.insert(d.rank);
  const auto stated = t.metadata.find("world_size");
  const std::string world =
      stated != t.metadata.end() ? stated->second : std::to_string(ranks.size());
  std::vector<std::pair<int, Timeline>> out;
  for (const int rank : ranks) {
    Timeline part;
    std::vector<int> device_map(t.devices.size(), -1);
    for (size_t d = 0; d < t.devices.size(); ++d) {
      if (t.devices[d].rank != rank) continue;
      device_map[d] = static_cast<int>(part.devices.size());
      part.devices.push_back(t.devices[d]);
    }
    append_timeline(part, t, device_map, 0);
    part.sort_spans();
    part.run = t.run;
    const std::string mine = "rank " + std::to_string(rank) + ".";
    for (const auto& [key, value] : t.metadata) {
      if (key.starts_with(mine)) {
        part.metadata[key.substr(mine.size())] = value;
      } else if (!key.starts_with("rank ")) {
        part.metadata.emplace(key, value);
      }
    }
    part.metadata["rank"] = std::to_string(rank);
    part.metadata["world_size"] = world;
    part.metadata.erase("ranks");  // a merged job's count of ranks: this part is one
    out.emplace_back(rank, std::move(part));
  }
  return out;
}

}  // namespace meshscope::traces
