// HTA 0.5's figures from raw Kineto events: its filter, rounding, interval merge, kernel kinds by
// name, overlap and per-stream idle split, step by step as HTA computes them
// (analysis_hta_window.h).
#include "traces/analysis_hta_window.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "traces/analysis.h"

namespace meshscope::traces {
namespace {

enum class HtaKind : uint8_t { kCommunication, kMemory, kComputation, kOther };

// hta/utils/utils.py get_kernel_type, with its regular expressions written out.
HtaKind kind_of(std::string_view name) {
  const bool nccl_kernel =
      name.starts_with("nccl") && name.find("Kernel", 4) != std::string_view::npos;
  if (nccl_kernel) return HtaKind::kCommunication;
  if (name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma")) {
    return HtaKind::kMemory;
  }
  const bool not_compute = name.find("Memcpy") != std::string_view::npos ||
                           name.starts_with("Memset") ||
                           name.find("Sync") != std::string_view::npos;
  return not_compute ? HtaKind::kOther : HtaKind::kComputation;
}

bool is_kernel_category(std::string_view cat) {
  for (std::string_view c :
       {"kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy", "mtia_ccp_events"}) {
    if (cat == c) return true;
  }
  return false;
}

struct Row {
  double ts = 0;
  double end = 0;
  const HtaEvent* event = nullptr;
  int64_t copies = 1;  // how many times HTA's join repeats this GPU row
};

struct UsInterval {
  double ts = 0;
  double end = 0;
};

// merge_kernel_intervals: sorted by start; a new interval where the start lies past the largest
// end seen so far. Negative-length events (from rounding) stay as HTA keeps them.
std::vector<UsInterval> hta_merge(std::vector<UsInterval> v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const UsInterval& a, const UsInterval& b) { return a.ts < b.ts; });
  std::vector<UsInterval> out;
  double reach = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < v.size(); ++i) {
    if (i == 0 || v[i].ts > reach) {
      out.push_back(v[i]);
    } else {
      out.back().end = std::max(out.back().end, v[i].end);
    }
    reach = i == 0 ? v[i].end : std::max(reach, v[i].end);
  }
  return out;
}

// Σ end − Σ start, which HTA sums exactly in int64 (its times are whole µs): summed here as
// differences, since epoch-based µs (1.7e15) summed over many intervals pass 2^53.
double run_time(const std::vector<UsInterval>& merged) {
  long double total = 0;
  for (const UsInterval& m : merged) total += m.end - m.ts;
  return static_cast<double>(total);
}

// communication_analysis.get_comm_comp_overlap_value: the time during which the running sum of
// +1/-1 (communication) and +2/-2 (computation) steps equals 3.
double overlap_time(const std::vector<UsInterval>& comm, const std::vector<UsInterval>& comp) {
  std::vector<std::pair<double, int>> steps;
  for (const UsInterval& c : comm) steps.insert(steps.end(), {{c.ts, 1}, {c.end, -1}});
  for (const UsInterval& c : comp) steps.insert(steps.end(), {{c.ts, 2}, {c.end, -2}});
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  double total = 0;
  int running = 0;
  for (size_t i = 0; i + 1 < steps.size(); ++i) {
    running += steps[i].second;
    if (running == 3) total += steps[i + 1].first - steps[i].first;
  }
  return total;
}

std::string_view text(const HtaEventTable& t, uint32_t id) {
  return id < t.strings.size() ? std::string_view(t.strings[id]) : std::string_view{};
}

bool is_gpu_event(const HtaEventTable& t, const HtaEvent& e) {
  const std::string_view name = text(t, e.name);
  return (e.stream >= 0 && e.correlation >= 0) || name == "Event Sync" || name == "Context Sync";
}

// The rows HTA keeps (trace._filter_irrelevant_gpu_kernels), rounded as HTA rounds them.
std::vector<Row> kept_rows(const HtaEventTable& t, bool rounded, bool step_filter,
                           int64_t& dropped) {
  std::vector<Row> all;
  all.reserve(t.events.size());
  for (const HtaEvent& e : t.events) {
    Row r{e.ts_us, e.ts_us + e.dur_us, &e};
    if (rounded) {
      r.ts = std::ceil(r.ts);
      r.end = std::floor(r.end);
    }
    all.push_back(r);
  }
  dropped = 0;
  if (!step_filter) return all;
  double last_step = std::numeric_limits<double>::quiet_NaN();
  for (const Row& r : all) {
    if (is_gpu_event(t, *r.event)) continue;
    if (text(t, r.event->name).find("ProfilerStep") == std::string_view::npos) continue;
    if (std::isnan(last_step) || r.ts > last_step) last_step = r.ts;
  }
  std::vector<Row> cpu, gpu;
  std::unordered_map<int64_t, int64_t> cpu_with_correlation;
  for (const Row& r : all) {
    if (is_gpu_event(t, *r.event)) {
      gpu.push_back(r);
    } else if (r.ts < last_step) {  // false for every row when no step is found (NaN)
      cpu.push_back(r);
      ++cpu_with_correlation[r.event->correlation];
    }
  }
  std::vector<Row> out;
  for (Row r : gpu) {
    const auto it = cpu_with_correlation.find(r.event->correlation);
    if (it == cpu_with_correlation.end()) {
      ++dropped;
      continue;
    }
    r.copies = it->second;
    out.push_back(r);
  }
  out.insert(out.end(), cpu.begin(), cpu.end());
  return out;
}

// For each GPU row, the CPU event HTA correlates it with (transform_correlation_to_index: the
// last CPU event in file order with the same correlation), as an event index; 0 for a GPU event
// without one (HTA's fallback, which then joins with event 0), -1 for correlation -1.
std::unordered_map<int64_t, int64_t> index_correlation(const HtaEventTable& t) {
  std::unordered_map<int64_t, int64_t> last_cpu;  // correlation -> event index
  for (const HtaEvent& e : t.events) {
    if (e.correlation != -1 && !is_gpu_event(t, e)) last_cpu[e.correlation] = e.index;
  }
  std::unordered_map<int64_t, int64_t> out;
  for (const HtaEvent& e : t.events) {
    if (!is_gpu_event(t, e)) continue;
    int64_t target = std::min<int64_t>(e.correlation, 0);
    if (e.correlation != -1) {
      if (const auto it = last_cpu.find(e.correlation); it != last_cpu.end()) target = it->second;
    }
    out[e.index] = target;
  }
  return out;
}

void split_idle(const HtaEventTable& t, const std::vector<Row>& rows,
                const HtaWindowOptions& options, HtaRankFigures& f) {
  std::unordered_map<int64_t, double> ts_of_index;  // over the kept rows (HTA's join)
  for (const Row& r : rows) ts_of_index.try_emplace(r.event->index, r.ts);
  const auto corr = index_correlation(t);
  std::map<int64_t, std::vector<Row>> by_stream;
  for (const Row& r : rows) {
    if (r.event->stream == -1 || !is_kernel_category(text(t, r.event->cat))) continue;
    for (int64_t c = 0; c < r.copies; ++c) by_stream[r.event->stream].push_back(r);
  }
  for (auto& [stream, list] : by_stream) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Row& a, const Row& b) { return a.ts < b.ts; });
    HtaStreamIdle s{.stream = stream};
    for (size_t i = 1; i < list.size(); ++i) {
      const double prev_end = list[i - 1].end;
      const double gap = list[i].ts - prev_end;
      std::optional<double> runtime_ts;
      if (const auto c = corr.find(list[i].event->index); c != corr.end()) {
        if (const auto it = ts_of_index.find(c->second); it != ts_of_index.end()) {
          runtime_ts = it->second;
        }
      }
      if (runtime_ts && *runtime_ts > prev_end) {
        s.host_wait_us += gap;
      } else if (gap < options.consecutive_kernel_delay_us) {
        s.kernel_wait_us += gap;
      } else {
        s.other_us += gap;
      }
    }
    f.streams.push_back(s);
  }
}

int64_t to_ns(double us) { return std::llround(us * 1000.0); }

std::string pct(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * fraction);
  return buf;
}

}  // namespace

bool hta_step_filter_applies(const std::vector<HtaEventTable>& run) {
  std::vector<std::string_view> names;
  for (const HtaEventTable& t : run) {
    for (const HtaEvent& e : t.events) {
      for (uint32_t id : {e.name, e.cat}) {
        const std::string_view n = text(t, id);
        if (n.find("ProfilerStep") == std::string_view::npos) continue;
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        if (names.size() >= 2) return true;
      }
    }
  }
  return false;
}

HtaRankFigures hta_rank_figures(const HtaEventTable& t, bool step_filter,
                                const HtaWindowOptions& options) {
  HtaRankFigures f;
  f.file = t.file;
  f.rank = t.rank;
  f.rounded = t.float_ts;
  f.step_filter = step_filter;
  const std::vector<Row> rows = kept_rows(t, t.float_ts, step_filter, f.gpu_events_dropped);
  std::vector<UsInterval> kernels, comm, comp;
  for (const Row& r : rows) {
    if (r.event->stream == -1) continue;
    ++f.kernels;
    kernels.push_back({r.ts, r.end});
    const HtaKind k = kind_of(text(t, r.event->name));
    if (k == HtaKind::kCommunication) comm.push_back({r.ts, r.end});
    if (k == HtaKind::kComputation) comp.push_back({r.ts, r.end});
  }
  if (kernels.empty()) {
    throw std::runtime_error(t.file + ": no GPU kernels left after HTA's filter (HTA fails here)");
  }
  const auto merged = hta_merge(std::move(kernels));
  f.kernel_time_us = merged.back().end - merged.front().ts;
  f.idle_us = f.kernel_time_us - run_time(merged);
  const auto comp_merged = hta_merge(std::move(comp));
  const auto comm_merged = hta_merge(std::move(comm));
  f.compute_us = run_time(comp_merged);
  f.non_compute_us = f.kernel_time_us - f.compute_us - f.idle_us;
  f.communication_us = run_time(comm_merged);
  f.overlap_us = overlap_time(comm_merged, comp_merged);
  if (f.kernel_time_us != 0) {
    f.idle_fraction = f.idle_us / f.kernel_time_us;
    f.compute_fraction = f.compute_us / f.kernel_time_us;
    f.non_compute_fraction = f.non_compute_us / f.kernel_time_us;
  }
  if (!comm_merged.empty() && f.communication_us != 0) {
    f.comm_compute_overlap = f.overlap_us / f.communication_us;
  }
  split_idle(t, rows, options, f);
  return f;
}

nlohmann::json to_json(const HtaRankFigures& f) {
  nlohmann::json streams = nlohmann::json::array();
  for (const HtaStreamIdle& s : f.streams) {
    streams.push_back({{"stream", s.stream},
                       {"host_wait_ns", to_ns(s.host_wait_us)},
                       {"kernel_wait_ns", to_ns(s.kernel_wait_us)},
                       {"other_idle_ns", to_ns(s.other_us)}});
  }
  return {{"file", f.file},
          {"rank", f.rank},
          {"rounded_to_us", f.rounded},
          {"step_filter", f.step_filter},
          {"kernels", f.kernels},
          {"gpu_events_dropped", f.gpu_events_dropped},
          {"kernel_time_ns", to_ns(f.kernel_time_us)},
          {"idle_ns", to_ns(f.idle_us)},
          {"compute_ns", to_ns(f.compute_us)},
          {"non_compute_ns", to_ns(f.non_compute_us)},
          {"communication_ns", to_ns(f.communication_us)},
          {"comm_compute_overlap_ns", to_ns(f.overlap_us)},
          {"idle_fraction", f.idle_fraction},
          {"compute_fraction", f.compute_fraction},
          {"non_compute_fraction", f.non_compute_fraction},
          {"comm_compute_overlap", f.comm_compute_overlap ? nlohmann::json(*f.comm_compute_overlap)
                                                          : nlohmann::json(nullptr)},
          {"streams", std::move(streams)}};
}

std::string format_hta_window_table(const std::vector<HtaRankFigures>& ranks) {
  std::string out =
      "HTA 0.5 defaults (--window hta): % of kernel time (first kernel start to last kernel "
      "end); overlap as % of communication time; idle split summed over streams\n";
  for (const HtaRankFigures& f : ranks) {
    double host = 0, kernel = 0, other = 0;
    for (const HtaStreamIdle& s : f.streams) {
      host += s.host_wait_us;
      kernel += s.kernel_wait_us;
      other += s.other_us;
    }
    out += "  rank " + std::to_string(f.rank) + "  " + f.file + "\n";
    out += "    kernel time " + format_duration(to_ns(f.kernel_time_us)) + "   idle " +
           pct(f.idle_fraction) + "   compute " + pct(f.compute_fraction) + "   non-compute " +
           pct(f.non_compute_fraction) + "   comm overlap " +
           (f.comm_compute_overlap ? pct(*f.comm_compute_overlap) : std::string("- (no comm)")) +
           "\n";
    out += "    idle by stream (sum): host wait " + format_duration(to_ns(host)) +
           ", kernel wait " + format_duration(to_ns(kernel)) + ", other " +
           format_duration(to_ns(other)) + "\n";
    // HTA subtracts each kernel's end from the next one's start on its stream: kernels that
    // overlap there (duplicated events, programmatic dependent launch) give a negative gap, which
    // its breakdown adds to the kernel wait. The figures stay HTA's; the reader is told why.
    for (const HtaStreamIdle& s : f.streams) {
      if (s.kernel_wait_us < 0 || s.host_wait_us < 0 || s.other_us < 0) {
        out += "    note: kernels overlap on stream " + std::to_string(s.stream) +
               ", so HTA's gaps between them are negative (its kernel wait there: " +
               format_duration(to_ns(s.kernel_wait_us)) +
               "); the default window counts only the gaps of their union\n";
      }
    }
    out += std::string("    ") +
           (f.step_filter ? "last ProfilerStep dropped, " : "no step filter, ") +
           std::to_string(f.gpu_events_dropped) + " GPU events dropped, " +
           (f.rounded ? "times rounded to whole µs" : "integer µs times") + "\n";
  }
  return out;
}

}  // namespace meshscope::traces
