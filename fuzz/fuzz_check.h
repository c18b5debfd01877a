// What the fuzz targets check: every Timeline an importer returns (indices in range, times the
// importers accept, an analysis and idle derivation without overflow (UBSan watches), and an
// export that reads back as the same Timeline), and that readers of hand-written files fail only
// naming the file. A violation traps.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::fuzz {

inline void require(bool ok) {
  if (!ok) __builtin_trap();
}

// Runs `read`; true when it returned. It may only fail with a std::runtime_error whose message
// starts with "fuzz.json: " (the file's name, as the targets call it), never nlohmann's own.
template <class Read>
bool located_or_nothing(const Read& read) {
  try {
    read();
    return true;
  } catch (const nlohmann::json::exception&) {
    require(false);
  } catch (const std::runtime_error& e) {
    require(std::string(e.what()).rfind("fuzz.json: ", 0) == 0);
  }
  return false;
}

inline void check_indices(const traces::Timeline& t) {
  using namespace traces;
  for (const Span& s : t.spans) {
    require(s.device < t.devices.size() && s.lane < t.devices[s.device].lanes.size());
    require(s.begin_ns <= s.end_ns && time_in_range(s.begin_ns) && time_in_range(s.end_ns));
    require(s.name < t.strings.size());
  }
  for (const Flow& f : t.flows) require(f.from < t.spans.size() && f.to < t.spans.size());
  for (const Counter& c : t.counters) require(c.device < t.devices.size());
}

inline void check_same(const traces::Timeline& a, const traces::Timeline& b) {
  using namespace traces;
  require(a.devices.size() == b.devices.size() && a.spans.size() == b.spans.size() &&
          a.flows.size() == b.flows.size() && a.counters.size() == b.counters.size() &&
          a.steps.size() == b.steps.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    const Device& x = a.devices[d];
    const Device& y = b.devices[d];
    require(x.rank == y.rank && x.name == y.name && x.coord == y.coord &&
            x.lanes.size() == y.lanes.size());
    for (size_t l = 0; l < x.lanes.size(); ++l) {
      require(x.lanes[l].name == y.lanes[l].name && x.lanes[l].kind == y.lanes[l].kind);
    }
  }
  for (size_t i = 0; i < a.spans.size(); ++i) {
    const Span& x = a.spans[i];
    const Span& y = b.spans[i];
    require(x.begin_ns == y.begin_ns && x.end_ns == y.end_ns && x.bytes == y.bytes &&
            x.device == y.device && x.lane == y.lane && x.stage == y.stage &&
            x.microbatch == y.microbatch && x.kind == y.kind && x.phase == y.phase &&
            a.span_name(x) == b.span_name(y));
    require(x.flops == y.flops || (x.flops != x.flops && y.flops != y.flops));
  }
  for (size_t i = 0; i < a.flows.size(); ++i) {
    require(a.flows[i].from == b.flows[i].from && a.flows[i].to == b.flows[i].to);
  }
  for (size_t c = 0; c < a.counters.size(); ++c) {
    require(a.counters[c].device == b.counters[c].device &&
            a.counters[c].name == b.counters[c].name &&
            a.counters[c].samples.size() == b.counters[c].samples.size());
  }
  for (size_t s = 0; s < a.steps.size(); ++s) {
    require(a.steps[s].begin_ns == b.steps[s].begin_ns && a.steps[s].end_ns == b.steps[s].end_ns);
  }
}

// The files of a job of several ranks, cut from one input at each "\n@@RANK@@\n" (up to
// `max_ranks`, named "rank<i><suffix>"): the targets that read such a job take their input so, and
// scripts/ci-fuzz.sh joins their seeds with the same separator.
inline std::vector<traces::NamedTraceBytes> split_ranks(std::string_view all, size_t max_ranks,
                                                        std::string_view suffix) {
  constexpr std::string_view kSeparator = "\n@@RANK@@\n";
  std::vector<traces::NamedTraceBytes> files;
  for (size_t at = 0; at <= all.size() && files.size() < max_ranks;) {
    const size_t end = std::min(all.find(kSeparator, at), all.size());
    files.push_back(
        {"rank" + std::to_string(files.size()) + std::string(suffix), all.substr(at, end - at)});
    at = end + kSeparator.size();
  }
  return files;
}

// Everything downstream of an import, on what the importer returned.
inline void check_timeline(const traces::Timeline& t) {
  using namespace traces;
  check_indices(t);
  (void)analyze(t);
  Timeline with_idle = t;
  add_idle_spans(with_idle);
  check_indices(with_idle);
  // import(export(T)) == T for whatever an importer makes, not only for meshscope's own runs.
  try {
    check_same(t, load_trace_bytes(export_chrome_json(t), "roundtrip.json"));
  } catch (const ImportError&) {
    __builtin_trap();  // our own export refused by our own importer
  }
}

}  // namespace meshscope::fuzz
