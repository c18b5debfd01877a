// Critical path: a backward walk over lane order, flows and collective arrivals.
#include "traces/analysis_critical_path.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <unordered_map>

#include "traces/analysis.h"
#include "traces/analysis_spans.h"
#include "traces/analysis_stragglers.h"

namespace meshscope::traces {
namespace {

bool is_work(SpanKind k) { return is_device_activity(k) || k == SpanKind::kHost; }

// The ends of a transfer between ranks (torch's c10d::send and gloo:recv range) are where the
// transfer's time went: work on the path, as communication.
std::vector<bool> transfer_ends(const Timeline& t) {
  std::vector<bool> out(t.spans.size(), false);
  for (const Flow& f : t.flows) {
    if (!is_transfer_flow(t, f)) continue;
    out[f.from] = true;
    out[f.to] = true;
  }
  return out;
}

PathKind path_kind(SpanKind k) {
  if (is_communication(k)) return PathKind::kCommunication;
  if (k == SpanKind::kMemcpy || k == SpanKind::kMemset) return PathKind::kMemory;
  if (k == SpanKind::kHost) return PathKind::kHost;
  return PathKind::kCompute;
}

struct Dependency {
  uint32_t span = 0;
  int64_t release = std::numeric_limits<int64_t>::min();
  PathStep::Via via = PathStep::Via::kStart;
};

class Graph {
 public:
  explicit Graph(const Timeline& t) : t_(t), transfer_end_(transfer_ends(t)) {
    std::map<std::pair<uint16_t, uint16_t>, size_t> lane_index;
    std::map<uint16_t, size_t> device_index;
    for (uint32_t i = 0; i < t.spans.size(); ++i) {
      const Span& s = t.spans[i];
      if (!is_work(s.kind) && !transfer_end_[i]) continue;
      auto [it, fresh] = lane_index.try_emplace({s.device, s.lane}, lanes_.size());
      if (fresh) lanes_.emplace_back();
      lanes_[it->second].push_back(i);
      lane_of_[i] = it->second;
    }
    for (uint32_t i = 0; i < t.spans.size(); ++i) {
      const Span& s = t.spans[i];
      if (!is_device_activity(s.kind)) continue;
      auto [it, fresh] = device_index.try_emplace(s.device, devices_.size());
      if (fresh) devices_.emplace_back();
      devices_[it->second].push_back(i);
      device_of_[i] = it->second;
    }
    for (uint32_t i = 0; i < t.spans.size(); ++i) {
      if (is_device_activity(t.spans[i].kind))
        rank_work_[t.devices[t.spans[i].device].rank].push_back(i);
    }
    for (auto& [rank, l] : rank_work_) {
      std::sort(l.begin(), l.end(),
                [&](uint32_t a, uint32_t b) { return t.spans[a].end_ns < t.spans[b].end_ns; });
    }
    for (auto& l : devices_) {
      std::sort(l.begin(), l.end(),
                [&](uint32_t a, uint32_t b) { return t.spans[a].end_ns < t.spans[b].end_ns; });
    }
    for (auto& l : lanes_) {
      std::sort(l.begin(), l.end(),
                [&](uint32_t a, uint32_t b) { return t.spans[a].end_ns < t.spans[b].end_ns; });
      std::vector<Interval> iv;
      for (uint32_t i : l) iv.push_back({t.spans[i].begin_ns, t.spans[i].end_ns});
      lane_busy_.push_back(merge_intervals(std::move(iv)));
    }
    for (const Flow& f : t.flows) {
      if (f.from < t.spans.size() && f.to < t.spans.size() &&
          (is_work(t.spans[f.from].kind) || transfer_end_[f.from])) {
        flows_in_[f.to].push_back(f.from);
      }
    }
    if (t.run.source == RunSource::kCpu) {
      // The collectives meshscope's cpu compute actions perform inside their spans: on the path,
      // their wait for the group is wait and their transfer communication, not compute.
      const auto by_device = detail::spans_by_device(t);
      nested_wait_.resize(by_device.size());
      nested_transfer_.resize(by_device.size());
      for (size_t d = 0; d < by_device.size(); ++d) {
        std::vector<Interval> wait, transfer;
        for (uint32_t c :
             detail::issued_collective_spans(t, detail::device_records(t, by_device[d]))) {
          wait.push_back({t.reached_ns(c), t.spans[c].begin_ns});
          transfer.push_back({t.spans[c].begin_ns, t.spans[c].end_ns});
        }
        nested_wait_[d] = merge_intervals(std::move(wait));
        nested_transfer_[d] = merge_intervals(std::move(transfer));
      }
    }
    const StragglerAnalysis st = stragglers(t);
    for (const CollectiveInstance& c : st.instances) {
      uint32_t last = c.spans.front();
      for (uint32_t s : c.spans) {
        if (t.spans[s].device == c.last_device) last = s;
      }
      for (uint32_t s : c.spans) {
        if (s != last) late_peer_[s] = last;
      }
    }
  }

  Dependency latest(uint32_t i) const {
    const Span& s = t_.spans[i];
    Dependency best;
    const auto offer = [&](uint32_t p, int64_t release, PathStep::Via via) {
      if (p == i || release > s.begin_ns) return;
      if (release > best.release) best = {p, release, via};
    };
    const auto latest_before = [&](const std::vector<uint32_t>& by_end, PathStep::Via via) {
      auto pos = std::upper_bound(by_end.begin(), by_end.end(), s.begin_ns,
                                  [&](int64_t v, uint32_t x) { return v < t_.spans[x].end_ns; });
      while (pos != by_end.begin()) {
        --pos;
        if (*pos != i && t_.spans[*pos].begin_ns < s.begin_ns) {
          offer(*pos, t_.spans[*pos].end_ns, via);
          break;
        }
      }
    };
    if (const auto it = lane_of_.find(i); it != lane_of_.end()) {
      latest_before(lanes_[it->second], PathStep::Via::kLane);
    }
    if (const auto it = device_of_.find(i); it != device_of_.end()) {
      latest_before(devices_[it->second], PathStep::Via::kDevice);
    }
    if (const auto it = flows_in_.find(i); it != flows_in_.end()) {
      for (uint32_t p : it->second) {
        // A source that began after s did is a late sender (late_source), not a release.
        if (t_.spans[p].begin_ns > s.begin_ns) continue;
        offer(p, std::min(t_.spans[p].end_ns, s.begin_ns), PathStep::Via::kFlow);
      }
    }
    return best;
  }

  // A flow into span i whose source began after i did and before `until` (a recv posted before
  // its send began): i could not finish before the source delivered, at the source's end (or
  // `until`, when the source ends later). Returns the source that delivered last and when.
  std::optional<std::pair<uint32_t, int64_t>> late_source(uint32_t i, int64_t until) const {
    const auto it = flows_in_.find(i);
    if (it == flows_in_.end()) return std::nullopt;
    const Span& s = t_.spans[i];
    std::optional<std::pair<uint32_t, int64_t>> best;
    for (uint32_t p : it->second) {
      const Span& src = t_.spans[p];
      if (src.begin_ns <= s.begin_ns || src.begin_ns >= until) continue;
      const int64_t delivered = std::max(src.begin_ns, std::min(src.end_ns, until));
      if (!best || delivered > best->second) best = std::pair{p, delivered};
    }
    return best;
  }

  // How much of [from, to) the lane of span i was busy (a host thread inside an enclosing op).
  int64_t lane_busy_within(uint32_t i, int64_t from, int64_t to) const {
    const auto it = lane_of_.find(i);
    if (it == lane_of_.end() || to <= from) return 0;
    return length_within(lane_busy_[it->second], {from, to});
  }

  // For a host synchronize call (cudaStreamSynchronize, cudaDeviceSynchronize,
  // cudaEventSynchronize, ...), the device work of its rank that ended last inside it, before
  // `until`: the call returned because that work finished.
  std::optional<uint32_t> synced_work(uint32_t i, int64_t until) const {
    const Span& s = t_.spans[i];
    if (s.kind != SpanKind::kHost ||
        t_.span_name(s).find("Synchronize") == std::string_view::npos) {
      return std::nullopt;
    }
    const auto it = rank_work_.find(t_.devices[s.device].rank);
    if (it == rank_work_.end()) return std::nullopt;
    const auto& l = it->second;
    auto pos = std::upper_bound(l.begin(), l.end(), std::min(until, s.end_ns),
                                [&](int64_t v, uint32_t x) { return v < t_.spans[x].end_ns; });
    if (pos == l.begin()) return std::nullopt;
    --pos;
    if (t_.spans[*pos].end_ns <= s.begin_ns) return std::nullopt;
    return *pos;
  }

  // Charges [from, until) of span i, of kind `kind`, to the path: a compute span's nested
  // collectives (meshscope cpu runs) go to wait and communication, the rest to `kind`.
  void charge(CriticalPath& p, uint32_t i, PathKind kind, int64_t from, int64_t until) const {
    const Span& s = t_.spans[i];
    p.by_rank[t_.devices[s.device].rank] += until - from;
    if (kind == PathKind::kCompute && s.device < nested_wait_.size() && until > from) {
      const int64_t wait = length_within(nested_wait_[s.device], {from, until});
      const int64_t transfer = length_within(nested_transfer_[s.device], {from, until});
      p.by_kind[static_cast<size_t>(PathKind::kWait)] += wait;
      p.by_kind[static_cast<size_t>(PathKind::kCommunication)] += transfer;
      p.by_kind[static_cast<size_t>(PathKind::kCompute)] += until - from - wait - transfer;
      return;
    }
    p.by_kind[static_cast<size_t>(kind)] += until - from;
  }

  // The late arriver of the collective instance `i` belongs to, when `i` is not it.
  std::optional<uint32_t> late_peer(uint32_t i) const {
    const auto it = late_peer_.find(i);
    if (it == late_peer_.end()) return std::nullopt;
    return it->second;
  }

 private:
  const Timeline& t_;
  std::vector<std::vector<uint32_t>> lanes_;  // work spans per lane, by end
  std::unordered_map<uint32_t, size_t> lane_of_;
  std::vector<IntervalSet> lane_busy_;              // union of each lane's work
  std::map<int, std::vector<uint32_t>> rank_work_;  // device activity per rank, by end
  std::vector<std::vector<uint32_t>> devices_;      // device-activity spans per device, by end
  std::unordered_map<uint32_t, size_t> device_of_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> flows_in_;
  std::unordered_map<uint32_t, uint32_t> late_peer_;
  std::vector<IntervalSet> nested_wait_;      // by device: waits inside compute spans (cpu runs)
  std::vector<IntervalSet> nested_transfer_;  // by device: transfers inside compute spans

 public:
  const std::vector<bool> transfer_end_;  // by span: an annotation end of a transfer
};

CriticalPath walk(const Timeline& t, const Graph& g, Interval w) {
  CriticalPath p;
  p.window = w;
  int64_t last = -1;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (!is_device_activity(s.kind) || s.end_ns > w.end_ns || s.end_ns <= w.begin_ns) continue;
    if (last < 0 || s.end_ns > t.spans[static_cast<size_t>(last)].end_ns) last = i;
  }
  if (last < 0) return p;
  auto cur = static_cast<uint32_t>(last);
  int64_t until = t.spans[cur].end_ns;
  p.end_ns = until;
  std::vector<PathStep> rev;
  PathStep::Via via = PathStep::Via::kStart;
  const auto kind_of = [&](uint32_t i) {
    return g.transfer_end_[i] ? PathKind::kCommunication : path_kind(t.spans[i].kind);
  };
  for (size_t guard = 0; guard <= t.spans.size(); ++guard) {
    const Span& s = t.spans[cur];
    if (const auto q = g.late_peer(cur)) {
      // It could not end before its late peer joined: the path goes on from that peer's begin.
      // Who was late is decided by arrival (Timeline::waits); the hand-over is at the late
      // peer's begin, so its own wait before it is charged once, by its own step.
      const int64_t joined = t.spans[*q].begin_ns;
      if (t.reached_ns(*q) > t.reached_ns(cur) && joined < until && joined > w.begin_ns) {
        rev.push_back({cur, until - joined, 0, via});
        g.charge(p, cur, kind_of(cur), joined, until);
        p.begin_ns = joined;
        cur = *q;
        until = joined;
        via = PathStep::Via::kCollective;
        continue;
      }
    }
    if (const auto q = g.late_source(cur, until); q && q->second > w.begin_ns) {
      // A recv waits for its late send: the path goes on from when that send delivered.
      const auto [source, delivered] = *q;
      rev.push_back({cur, until - delivered, 0, via});
      g.charge(p, cur, kind_of(cur), delivered, until);
      p.begin_ns = delivered;
      cur = source;
      until = delivered;
      via = PathStep::Via::kFlow;
      continue;
    }
    if (const auto q = g.synced_work(cur, until)) {
      const int64_t done = t.spans[*q].end_ns;
      if (done > w.begin_ns) {
        rev.push_back({cur, until - done, 0, via});
        g.charge(p, cur, PathKind::kHost, done, until);
        p.begin_ns = done;
        cur = *q;
        until = done;
        via = PathStep::Via::kSync;
        continue;
      }
    }
    const int64_t from = std::max(s.begin_ns, w.begin_ns);
    PathStep step{cur, std::max<int64_t>(0, until - from), 0, via};
    const int rank = t.devices[s.device].rank;
    g.charge(p, cur, kind_of(cur), until - step.charged_ns, until);
    p.begin_ns = from;
    const Dependency d = s.begin_ns > w.begin_ns ? g.latest(cur) : Dependency{};
    if (d.via == PathStep::Via::kStart) {
      rev.push_back(step);
      break;
    }
    const int64_t release = std::max(d.release, w.begin_ns);
    step.wait_ns = s.begin_ns - release;
    // On a host thread the gap is often its enclosing op's own work: host time, not waiting.
    const int64_t busy =
        s.kind == SpanKind::kHost ? g.lane_busy_within(cur, release, s.begin_ns) : 0;
    p.by_kind[static_cast<size_t>(PathKind::kHost)] += busy;
    p.by_kind[static_cast<size_t>(PathKind::kWait)] += step.wait_ns - busy;
    p.by_rank[rank] += step.wait_ns;
    p.begin_ns = release;
    rev.push_back(step);
    if (d.release <= w.begin_ns) break;
    cur = d.span;
    until = release;
    via = d.via;
  }
  p.steps.assign(rev.rbegin(), rev.rend());
  return p;
}

std::string pct(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

constexpr std::array<std::string_view, 6> kViaNames = {"start",      "lane",   "flow",
                                                       "collective", "device", "sync"};

}  // namespace

std::vector<Interval> charged_intervals(const CriticalPath& p) {
  std::vector<Interval> out;
  out.reserve(p.steps.size());
  int64_t at = p.begin_ns;
  for (const PathStep& s : p.steps) {
    at += s.wait_ns;
    out.push_back({at, at + s.charged_ns});
    at += s.charged_ns;
  }
  return out;
}

std::vector<CriticalPath> critical_paths(const Timeline& t) {
  const Graph g(t);
  std::vector<CriticalPath> out;
  for (const Interval& w : analysis_windows(t)) {
    CriticalPath p = walk(t, g, w);
    if (!p.steps.empty()) out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json to_json(const std::vector<CriticalPath>& paths, const Timeline& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const CriticalPath& p : paths) {
    nlohmann::json kinds, ranks = nlohmann::json::array(), steps = nlohmann::json::array();
    for (size_t k = 0; k < p.by_kind.size(); ++k) {
      kinds[std::string(kPathKindNames[k]) + "_ns"] = p.by_kind[k];
    }
    for (const auto& [rank, ns] : p.by_rank) {
      ranks.push_back({{"rank", rank},
                       {"ns", ns},
                       {"share", p.length_ns() > 0 ? static_cast<double>(ns) / p.length_ns() : 0}});
    }
    for (const PathStep& s : p.steps) {
      const Span& span = t.spans[s.span];
      steps.push_back({{"span", s.span},
                       {"name", std::string(t.span_name(span))},
                       {"kind", name(span.kind)},
                       {"rank", t.devices[span.device].rank},
                       {"device", span.device},
                       {"begin_ns", span.begin_ns},
                       {"end_ns", span.end_ns},
                       {"charged_ns", s.charged_ns},
                       {"wait_ns", s.wait_ns},
                       {"reached_by", kViaNames[static_cast<size_t>(s.via)]}});
    }
    out.push_back({{"window", {{"begin_ns", p.window.begin_ns}, {"end_ns", p.window.end_ns}}},
                   {"begin_ns", p.begin_ns},
                   {"end_ns", p.end_ns},
                   {"length_ns", p.length_ns()},
                   {"by_kind", kinds},
                   {"by_rank", ranks},
                   {"steps", steps}});
  }
  return out;
}

std::string format_critical_path(const std::vector<CriticalPath>& paths, const Timeline& t) {
  (void)t;
  std::string out = "critical path per step (shares are % of the path's length):\n";
  for (size_t i = 0; i < paths.size(); ++i) {
    const CriticalPath& p = paths[i];
    out += "  step " + std::to_string(i) + ": " + format_duration(p.length_ns()) + " over " +
           std::to_string(p.steps.size()) + " spans —";
    for (size_t k = 0; k < p.by_kind.size(); ++k) {
      out += " " + std::string(kPathKindNames[k]) + " " + pct(p.by_kind[k], p.length_ns());
    }
    out += "\n    by rank:";
    for (const auto& [rank, ns] : p.by_rank) {
      out += " rank " + std::to_string(rank) + " " + pct(ns, p.length_ns());
    }
    // The walk stops at a span that waited for nothing (a rank whose trace starts late) and
    // begins at the last device work: what of the step lies outside the path, said.
    const int64_t before = p.begin_ns - p.window.begin_ns, after = p.window.end_ns - p.end_ns;
    if (before > 0 || after > 0) {
      out += "\n    of the step's " + format_duration(p.window.end_ns - p.window.begin_ns) +
             ": the path begins " + format_duration(std::max<int64_t>(0, before)) +
             " after it (where nothing it waited for is earlier) and ends " +
             format_duration(std::max<int64_t>(0, after)) + " before its end";
    }
    out += "\n";
  }
  return out;
}

}  // namespace meshscope::traces
