// Renders a TimelineAnalysis as JSON and as an aligned text table.
#include "traces/analysis_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string_view>
#include <vector>

#include "traces/byte_size.h"

namespace meshscope::traces {
namespace {

using nlohmann::json;

json bubbles_json(const BubbleAttribution& b) {
  return {{"warmup_ns", b.warmup_ns},
          {"peer_wait_ns", b.peer_wait_ns},
          {"cooldown_ns", b.cooldown_ns},
          {"unattributed_ns", b.unattributed_ns},
          {"other_ns", b.other_ns}};
}

json device_json(const DeviceAnalysis& d) {
  json j = {{"device", d.device},
            {"rank", d.rank},
            {"name", d.name},
            {"dp", d.coord.dp},
            {"pp", d.coord.pp},
            {"tp", d.coord.tp},
            {"window_ns", d.window_ns},
            {"busy_ns", d.busy_ns},
            {"compute_ns", d.compute_ns},
            {"communication_ns", d.communication_ns},
            {"overlap_ns", d.overlap_ns},
            {"idle_ns", d.idle_ns},
            {"bubble_fraction", d.bubble_fraction},
            {"bubbles",
             {{"warmup_ns", d.bubbles.warmup_ns},
              {"peer_wait_ns", d.bubbles.peer_wait_ns},
              {"cooldown_ns", d.bubbles.cooldown_ns},
              {"unattributed_ns", d.bubbles.unattributed_ns},
              {"other_ns", d.bubbles.other_ns}}}};
  json steps = json::array();
  for (const BubbleAttribution& b : d.step_bubbles) steps.push_back(bubbles_json(b));
  j["step_bubbles"] = std::move(steps);
  json phases = json::array();
  for (const StagePhaseTime& p : d.stage_phases) {
    phases.push_back({{"stage", p.stage},
                      {"phase", std::string(name(p.phase))},
                      {"compute_ns", p.compute_ns},
                      {"microbatches", p.microbatches}});
  }
  j["stage_phases"] = std::move(phases);
  j["peak_activation_bytes"] =
      d.peak_activation_bytes ? json(*d.peak_activation_bytes) : json(nullptr);
  return j;
}

json hta_json(const HtaDeviceBreakdown& h) {
  return {{"device", h.device},
          {"rank", h.rank},
          {"name", h.name},
          {"begin_ns", h.begin_ns},
          {"end_ns", h.end_ns},
          {"span_ns", h.span_ns},
          {"busy_ns", h.busy_ns},
          {"idle_ns", h.idle_ns},
          {"compute_ns", h.compute_ns},
          {"communication_ns", h.communication_ns},
          {"memory_ns", h.memory_ns},
          {"host_wait_ns", h.host_wait_ns},
          {"kernel_wait_ns", h.kernel_wait_ns},
          {"other_idle_ns", h.other_idle_ns},
          {"comm_compute_overlap_ns", h.comm_compute_overlap_ns},
          {"comm_compute_overlap", h.comm_compute_overlap}};
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

std::string share(int64_t part, int64_t whole) {
  return whole > 0 ? percent(static_cast<double>(part) / whole) : "-";
}

// A table of text cells: the first column left-aligned, the others right-aligned.
class Table {
 public:
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void render(std::string& out) const {
    std::vector<size_t> width;
    for (const auto& row : rows_) {
      width.resize(std::max(width.size(), row.size()), 0);
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
    }
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        const std::string pad(width[c] - display_width(row[c]), ' ');
        if (c > 0) line += "  ";
        line += c == 0 ? row[c] + pad : pad + row[c];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }

 private:
  // Device names hold "·" and durations "µ": count code points, not bytes.
  static size_t display_width(std::string_view s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char ch) {
      return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    }));
  }
  std::vector<std::vector<std::string>> rows_;
};

std::string peak_text(const std::optional<int64_t>& peak) {
  return peak ? format_bytes(*peak) : "-";
}

void render_devices(const TimelineAnalysis& a, std::string& out) {
  Table t;
  // Without step markers the one window is the whole trace (inference, an Nsight capture): its
  // idle share is no pipeline's bubble, and says so.
  t.add({"device", "busy", "compute", "comm", "overlap", "idle", a.from_steps ? "bubble" : "idle %",
         "peak act"});
  for (const DeviceAnalysis& d : a.devices) {
    t.add({d.name, format_duration(d.busy_ns), format_duration(d.compute_ns),
           format_duration(d.communication_ns), format_duration(d.overlap_ns),
           format_duration(d.idle_ns), percent(d.bubble_fraction),
           peak_text(d.peak_activation_bytes)});
  }
  t.add({"overall", format_duration(a.busy_ns), format_duration(a.compute_ns),
         format_duration(a.communication_ns), format_duration(a.overlap_ns),
         format_duration(a.idle_ns), percent(a.bubble_fraction), ""});
  t.render(out);
}

void render_bubbles(const TimelineAnalysis& a, std::string& out) {
  out += "bubble attribution, totals over all steps:\n";
  Table t;
  t.add({"bubbles", "warm-up", "peer wait", "other", "cool-down", "unattributed"});
  for (const DeviceAnalysis& d : a.devices) {
    t.add({d.name, format_duration(d.bubbles.warmup_ns), format_duration(d.bubbles.peer_wait_ns),
           format_duration(d.bubbles.other_ns), format_duration(d.bubbles.cooldown_ns),
           format_duration(d.bubbles.unattributed_ns)});
  }
  t.render(out);
}

// F/B/I/W time per stage, per device: the stages it ran and what each phase took.
void render_stage_phases(const TimelineAnalysis& a, std::string& out) {
  Table t;
  t.add({"stage compute", "stage", "forward", "backward", "input grad", "weight grad",
         "microbatches"});
  for (const DeviceAnalysis& d : a.devices) {
    std::map<int, std::array<int64_t, static_cast<size_t>(Phase::kCount)>> by_stage;
    std::map<int, int> microbatches;
    for (const StagePhaseTime& p : d.stage_phases) {
      by_stage[p.stage][static_cast<size_t>(p.phase)] += p.compute_ns;
      microbatches[p.stage] = std::max(microbatches[p.stage], p.microbatches);
    }
    for (const auto& [stage, phase_ns] : by_stage) {
      const auto& ns =
          phase_ns;  // a structured binding cannot be captured before C++20 in clang 14
      const auto cell = [&ns](Phase p) {
        const int64_t v = ns[static_cast<size_t>(p)];
        return v > 0 ? format_duration(v) : std::string("-");
      };
      t.add({d.name, std::to_string(stage), cell(Phase::kForward), cell(Phase::kBackward),
             cell(Phase::kInputGrad), cell(Phase::kWeightGrad),
             std::to_string(microbatches[stage])});
    }
  }
  t.render(out);
}

void render_hta(const TimelineAnalysis& a, std::string& out) {
  out +=
      "HTA-style breakdown (span = first to last device activity, all steps): idle, compute, comm, "
      "memory = % of span, each the union of its kernels, so they overlap (compute beside comm) "
      "and may add up past 100%; host wait, kernel wait, other idle = % of idle; comm overlap = "
      "% of comm time\n";
  Table t;
  t.add({"device time (HTA)", "span", "idle", "compute", "comm", "memory", "host wait",
         "kernel wait", "other idle", "comm overlap"});
  for (const HtaDeviceBreakdown& h : a.hta) {
    t.add({h.name, format_duration(h.span_ns), share(h.idle_ns, h.span_ns),
           share(h.compute_ns, h.span_ns), share(h.communication_ns, h.span_ns),
           share(h.memory_ns, h.span_ns), share(h.host_wait_ns, h.idle_ns),
           share(h.kernel_wait_ns, h.idle_ns), share(h.other_idle_ns, h.idle_ns),
           share(h.comm_compute_overlap_ns, h.communication_ns)});
  }
  t.render(out);
}

}  // namespace

json to_json(const TimelineAnalysis& a) {
  json windows = json::array();
  for (const Interval& w : a.windows) {
    windows.push_back(
        {{"begin_ns", w.begin_ns}, {"end_ns", w.end_ns}, {"duration_ns", w.length_ns()}});
  }
  json devices = json::array();
  for (const DeviceAnalysis& d : a.devices) devices.push_back(device_json(d));
  json hta = json::array();
  for (const HtaDeviceBreakdown& h : a.hta) hta.push_back(hta_json(h));
  return {{"version", kAnalysisJsonVersion},
          {"windows", std::move(windows)},
          {"step_time_ns", a.step_time_ns},
          {"window_ns", a.window_ns},
          {"from_steps", a.from_steps},
          {"overall",
           {{"busy_ns", a.busy_ns},
            {"compute_ns", a.compute_ns},
            {"communication_ns", a.communication_ns},
            {"overlap_ns", a.overlap_ns},
            {"idle_ns", a.idle_ns},
            {"bubble_fraction", a.bubble_fraction}}},
          {"devices", std::move(devices)},
          {"has_stage_annotations", a.has_stage_annotations},
          {"hta", std::move(hta)}};
}

std::string format_table(const TimelineAnalysis& a) {
  std::string out;
  const std::string steps = std::to_string(a.windows.size());
  if (a.from_steps) {
    out += "steps: " + steps + "   step time: " + format_duration(a.step_time_ns) +
           " (mean per step)   overall bubble fraction: " + percent(a.bubble_fraction) +
           " (idle % of the step windows × devices)\n\n";
    out += "per device, totals over " + steps + (a.windows.size() == 1 ? " step" : " steps") +
           " (bubble = idle % of the step windows):\n";
  } else {
    out +=
        "no step markers (ProfilerStep#N ranges, or meshscope's steps): one window, from the first "
        "to the last device activity, " +
        format_duration(a.step_time_ns) + "   idle over it: " + percent(a.bubble_fraction) +
        " (idle % of the window × devices)\n\n";
    out += "per device, over that window (idle % = idle share of it):\n";
  }
  render_devices(a, out);
  if (a.has_stage_annotations) {
    out += "\n";
    render_bubbles(a, out);
    out += "\n";
    render_stage_phases(a, out);
  }
  if (!a.hta.empty()) {
    out += "\n";
    render_hta(a, out);
  }
  return out;
}

}  // namespace meshscope::traces
