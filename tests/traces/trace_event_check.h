// Test helper: a strict Trace Event Format check of a whole file (the format's required fields per
// phase, B/E pairs nesting per thread, X durations >= 0, flow ends paired, no key twice in one
// object), returning every problem found as "event N: what". X slices of one thread that overlap
// without nesting are counted apart: real GPU traces have them (kernels of one stream overlapping
// under programmatic dependent launch), and Perfetto drops the later one of each
// (slice_drop_overlapping_complete_event), so meshscope's exports must have none.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace meshscope::traces::testing {

struct TraceEventCheck {
  std::vector<std::string> problems;  // empty: the file passes
  size_t x_overlaps = 0;              // X slices overlapping another of their thread, unnested
  std::string first_overlap;
  size_t events = 0;
};

namespace detail {

// Parses with a callback that refuses a key repeated in one object (nlohmann keeps the last).
inline nlohmann::json parse_without_repeated_keys(const std::string& text,
                                                  std::vector<std::string>& problems) {
  std::vector<std::set<std::string>> keys;
  const auto cb = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) {
      keys.emplace_back();
    } else if (ev == E::object_end) {
      keys.pop_back();
    } else if (ev == E::key && !keys.empty()) {
      const std::string k = parsed.get<std::string>();
      if (!keys.back().insert(k).second && problems.size() < 20) {
        problems.push_back("key \"" + k + "\" twice in one object");
      }
    }
    return true;
  };
  return nlohmann::json::parse(text, cb);
}

inline std::string thread_key(const nlohmann::json& e) {
  return e["pid"].dump() + "/" + e["tid"].dump();
}

}  // namespace detail

inline TraceEventCheck check_trace_events(const std::string& text) {
  TraceEventCheck r;
  auto problem = [&](size_t i, const std::string& what) {
    if (r.problems.size() < 50) r.problems.push_back("event " + std::to_string(i) + ": " + what);
  };
  nlohmann::json doc;
  try {
    doc = detail::parse_without_repeated_keys(text, r.problems);
  } catch (const std::exception& e) {
    r.problems.push_back(std::string("not JSON: ") + e.what());
    return r;
  }
  const nlohmann::json* events = &doc;
  if (doc.is_object()) {
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
      r.problems.push_back("object form without a traceEvents array");
      return r;
    }
    events = &doc["traceEvents"];
  } else if (!doc.is_array()) {
    r.problems.push_back("neither an object nor an array");
    return r;
  }
  r.events = events->size();
  struct Slice {
    double begin, end;
    size_t index;
  };
  std::map<std::string, std::vector<Slice>> slices;                    // X events per thread
  std::map<std::string, std::vector<std::pair<double, size_t>>> open;  // B stacks per thread
  std::map<std::string, std::pair<int, int>> flows;                    // (cat, id) -> (#s, #f)
  const auto number = [](const nlohmann::json& e, const char* k) {
    return e.contains(k) && e[k].is_number();
  };
  const auto id_like = [](const nlohmann::json& e, const char* k) {
    return e.contains(k) && (e[k].is_number_integer() || e[k].is_string());
  };
  for (size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    if (!e.is_object()) {
      problem(i, "not an object");
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string() || e["ph"].get<std::string>().size() != 1) {
      problem(i, "no one-letter ph");
      continue;
    }
    const char ph = e["ph"].get<std::string>()[0];
    if (e.contains("args") && !e["args"].is_object()) problem(i, "args is not an object");
    const bool on_thread = id_like(e, "pid") && id_like(e, "tid");
    switch (ph) {
      case 'X':
      case 'B':
      case 'E': {
        if (!number(e, "ts") || !on_thread) {
          problem(i, std::string("ph ") + ph + " without a numeric ts, pid or tid");
          break;
        }
        if (ph != 'E' && (!e.contains("name") || !e["name"].is_string())) {
          problem(i, std::string("ph ") + ph + " without a string name");
        }
        const double ts = e["ts"].get<double>();
        const std::string th = detail::thread_key(e);
        if (ph == 'X') {
          if (!number(e, "dur")) {
            problem(i, "X without a numeric dur");
          } else if (e["dur"].get<double>() < 0) {
            problem(i, "X with dur < 0");
          } else {
            slices[th].push_back({ts, ts + e["dur"].get<double>(), i});
          }
        } else if (ph == 'B') {
          open[th].emplace_back(ts, i);
        } else if (open[th].empty()) {
          problem(i, "E without a B on its thread");
        } else {
          if (ts < open[th].back().first) problem(i, "E before its B");
          open[th].pop_back();
        }
        break;
      }
      case 'M':
        if (!e.contains("name") || !e["name"].is_string() || !id_like(e, "pid") ||
            !e.contains("args") || !e["args"].is_object()) {
          problem(i, "M without a name, pid or args");
        }
        break;
      case 'C':
        if (!e.contains("name") || !number(e, "ts") || !id_like(e, "pid") || !e.contains("args") ||
            !e["args"].is_object()) {
          problem(i, "C without a name, ts, pid or args");
          break;
        }
        for (const auto& [k, v] : e["args"].items()) {
          if (!v.is_number()) problem(i, "C series \"" + k + "\" is not a number");
        }
        break;
      case 's':
      case 't':
      case 'f': {
        if (!number(e, "ts") || !on_thread || !id_like(e, "id")) {
          problem(i, std::string("flow ") + ph + " without a ts, pid, tid or id");
          break;
        }
        const std::string cat = e.contains("cat") ? e["cat"].dump() : "";
        auto& n = flows[cat + "#" + e["id"].dump()];
        if (ph == 's') ++n.first;
        if (ph == 'f') ++n.second;
        break;
      }
      case 'i':
      case 'I':
        if (!number(e, "ts")) problem(i, "instant without a ts");
        break;
      default:
        problem(i, std::string("phase ") + ph + " is not checked here");
    }
  }
  for (const auto& [th, stack] : open) {
    for (const auto& [ts, i] : stack) problem(i, "B never ended on thread " + th);
  }
  // Slices of one thread nest: each begins and ends inside the one it begins in (equal ends are
  // fine). Half a nanosecond of slack for the microsecond doubles.
  constexpr double kSlack = 0.0005;
  for (auto& [th, list] : slices) {
    std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<Slice> stack;
    for (const Slice& s : list) {
      while (!stack.empty() && stack.back().end <= s.begin + kSlack) stack.pop_back();
      if (!stack.empty() && s.end > stack.back().end + kSlack) {
        if (r.x_overlaps++ == 0) {
          r.first_overlap = "event " + std::to_string(s.index) + " overlaps event " +
                            std::to_string(stack.back().index) + " on thread " + th;
        }
      }
      stack.push_back(s);
    }
  }
  for (const auto& [id, n] : flows) {
    if (n.first != 1 || n.second != 1) {
      r.problems.push_back("flow " + id + ": " + std::to_string(n.first) + " start(s), " +
                           std::to_string(n.second) + " finish(es)");
    }
  }
  return r;
}

}  // namespace meshscope::traces::testing
