// Tooltip text for spans and folded boxes.
#include "gui/view/span_info.h"

#include <cstdio>

#include "gui/view/activity.h"
#include "traces/analysis.h"
#include "traces/analysis_report.h"
#include "traces/byte_size.h"

namespace meshscope::gui {

using traces::format_bytes;
using traces::format_duration;

std::string describe_span(const traces::Timeline& t, const TrackIndex& index, uint32_t id,
                          int64_t origin_ns) {
  const traces::Span& s = t.spans[id];
  std::string out(t.span_name(s).empty() ? std::string(name(activity_of(s)))
                                         : std::string(t.span_name(s)));
  out += "\n" + std::string(name(activity_of(s)));
  if (s.stage >= 0) out += "  stage " + std::to_string(s.stage);
  if (s.microbatch >= 0) out += "  microbatch " + std::to_string(s.microbatch);
  const auto& dev = t.devices[s.device];
  out += "\n" + dev.name;
  if (s.lane < dev.lanes.size()) out += " / " + dev.lanes[s.lane].name;
  out += "\nstart " + format_duration(s.begin_ns - origin_ns) + "  duration " +
         format_duration(s.duration_ns());
  char buf[64];
  if (s.bytes > 0) {
    out += "\n" + format_bytes(s.bytes);
    if (s.duration_ns() > 0) {
      std::snprintf(buf, sizeof buf, "  %.2f GB/s",
                    static_cast<double>(s.bytes) / static_cast<double>(s.duration_ns()));
      out += buf;
    }
  }
  if (s.flops > 0 && s.duration_ns() > 0) {
    std::snprintf(buf, sizeof buf, "\n%.3g GFLOP  %.1f GFLOP/s", s.flops / 1e9,
                  s.flops / static_cast<double>(s.duration_ns()));
    out += buf;
  }
  if (auto f = index.flow_from(id)) {
    out += "\n-> " + t.devices[t.spans[t.flows[*f].to].device].name;
  }
  if (auto f = index.flow_to(id)) {
    out += "\n<- " + t.devices[t.spans[t.flows[*f].from].device].name;
  }
  return out;
}

std::string long_label(const traces::Timeline& t, const traces::Span& s) {
  if (s.kind == traces::SpanKind::kIdle) return "idle " + format_duration(s.duration_ns());
  const std::string_view n = t.span_name(s);
  return n.empty() ? std::string(name(activity_of(s))) : std::string(n);
}

std::string short_label(const traces::Timeline& t, const traces::Span& s) {
  if (s.kind == traces::SpanKind::kIdle) return format_duration(s.duration_ns());
  if (s.microbatch < 0) return long_label(t, s);
  static constexpr char kLetters[] = "FBIWOCSRXMIHA";  // by Activity
  static_assert(sizeof kLetters - 1 == static_cast<size_t>(Activity::kCount));
  return kLetters[static_cast<size_t>(activity_of(s))] + std::to_string(s.microbatch);
}

std::string describe_fold(uint32_t count, int64_t begin_ns, int64_t end_ns) {
  return std::to_string(count) + " spans folded: " + format_duration(end_ns - begin_ns) +
         " (zoom in to see them)";
}

}  // namespace meshscope::gui
