// Derived idle spans: the gaps of each device's busy union inside the step windows.
#include <cstdio>
#include <limits>

#include "traces/analysis.h"
#include "traces/analysis_spans.h"

namespace meshscope::traces {
namespace {

uint16_t idle_lane(Timeline& t, uint16_t device) {
  const auto& lanes = t.devices[device].lanes;
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].kind == LaneKind::kCompute) return static_cast<uint16_t>(i);
  }
  if (!lanes.empty()) return 0;
  return t.add_lane(device, "compute", LaneKind::kCompute);
}

}  // namespace

std::string format_duration(int64_t ns) {
  const bool negative = ns < 0;
  // Unsigned so that the magnitude of INT64_MIN is representable.
  const uint64_t mag =
      negative ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buf[48];
  const char* sign = negative ? "-" : "";
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  if (mag < 1000) {
    std::snprintf(buf, sizeof buf, "%s%llu ns", sign, u(mag));
    return buf;
  }
  // Three decimals of the largest unit it reaches, rounded half up (truncated, 3.49690 s read
  // 3.496 s beside a summary's 3.497): 999.9996 ms rounds to 1.000 s, not 1000.000 ms.
  static constexpr struct {
    uint64_t unit;
    const char* name;
  } kUnits[] = {{1000, "µs"}, {1000000, "ms"}, {1000000000, "s"}};
  size_t k = mag < 1000000 ? 0 : mag < 1000000000 ? 1 : 2;
  uint64_t step = kUnits[k].unit / 1000;
  uint64_t q = mag / step + (mag % step >= (step + 1) / 2 && step > 1 ? 1 : 0);
  if (q >= 1000000 && k < 2) {
    ++k;
    step = kUnits[k].unit / 1000;
    q = mag / step + (mag % step >= (step + 1) / 2 ? 1 : 0);
  }
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu %s", sign, u(q / 1000), u(q % 1000),
                kUnits[k].name);
  return buf;
}

size_t remove_idle_spans(Timeline& t) {
  constexpr uint32_t kGone = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> new_index(t.spans.size(), kGone);
  size_t kept = 0;
  for (size_t i = 0; i < t.spans.size(); ++i) {
    if (t.spans[i].kind == SpanKind::kIdle) continue;
    new_index[i] = static_cast<uint32_t>(kept);
    t.spans[kept++] = t.spans[i];
  }
  const size_t removed = t.spans.size() - kept;
  if (removed == 0) return 0;
  t.spans.resize(kept);
  // A flow survives only when both ends do; one pointing outside the span list was never valid.
  size_t flows_kept = 0;
  for (const Flow& f : t.flows) {
    if (f.from >= new_index.size() || f.to >= new_index.size()) continue;
    if (new_index[f.from] == kGone || new_index[f.to] == kGone) continue;
    t.flows[flows_kept++] = {new_index[f.from], new_index[f.to]};
  }
  t.flows.resize(flows_kept);
  size_t collectives_kept = 0;  // idle spans have none, but the others move down
  for (const SpanCollective& c : t.collectives) {
    if (c.span >= new_index.size() || new_index[c.span] == kGone) continue;
    t.collectives[collectives_kept++] = {new_index[c.span], c.collective};
  }
  t.collectives.resize(collectives_kept);
  size_t waits_kept = 0;
  for (const SpanWait& w : t.waits) {
    if (w.span >= new_index.size() || new_index[w.span] == kGone) continue;
    t.waits[waits_kept++] = {new_index[w.span], w.wait_ns};
  }
  t.waits.resize(waits_kept);
  // Origins belong to imported spans, never to idle ones; only their indices move.
  size_t origins_kept = 0;
  for (const SpanOrigin& o : t.origins) {
    if (o.span >= new_index.size() || new_index[o.span] == kGone) continue;
    SpanOrigin moved = o;
    moved.span = new_index[o.span];
    t.origins[origins_kept++] = moved;
  }
  t.origins.resize(origins_kept);
  return removed;
}

size_t add_idle_spans(Timeline& t) {
  remove_idle_spans(t);
  const std::vector<Interval> windows = analysis_windows(t);
  const auto by_device = detail::spans_by_device(t);
  size_t added = 0;
  for (size_t d = 0; d < by_device.size(); ++d) {
    if (is_host_only(t.devices[d])) continue;  // as in analyze(): no device work, no bubbles
    const auto recs = detail::device_records(t, by_device[d]);
    const IntervalSet busy = detail::busy_less_issued(
        recs, detail::compute_less_issued(recs, detail::issued_collectives(t, recs)));
    const auto device = static_cast<uint16_t>(d);
    std::optional<uint16_t> lane;
    // One name for every gap: Perfetto's and chrome://tracing's selection tables group slices by
    // name, so their idle time adds up in one row (a name with its length, "idle 471 ns", had
    // made a row of each); the length is the slice's own duration.
    const uint32_t idle_name = t.strings.intern("idle");
    for (const Interval& w : windows) {
      for (const Interval& gap : gaps_within(busy, w)) {
        if (!lane) lane = idle_lane(t, device);
        Span s{.begin_ns = gap.begin_ns,
               .end_ns = gap.end_ns,
               .name = idle_name,
               .device = device,
               .lane = *lane};
        s.kind = SpanKind::kIdle;
        t.add_span(s);
        ++added;
      }
    }
  }
  return added;
}

}  // namespace meshscope::traces
