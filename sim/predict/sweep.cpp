// Expanding sweeps: every list in a configuration stands for its values, one point per
// combination.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/predict/config.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

// The dotted key under which `v` (at `depth`) nests deeper than kMaxConfigDepth, if it does; the
// recursion stops at that depth.
std::optional<std::string> too_deep(const json& v, int depth, const std::string& dotted) {
  if (depth > kMaxConfigDepth) return dotted;
  if (v.is_object()) {
    for (const auto& [k, x] : v.items())
      if (x.is_structured())
        if (auto d = too_deep(x, depth + 1, dotted.empty() ? k : dotted + "." + k)) return d;
  } else if (v.is_array()) {
    for (const json& x : v)
      if (x.is_structured())
        if (auto d = too_deep(x, depth + 1, dotted)) return d;
  }
  return std::nullopt;
}

// The kind of a JSON value as a config's lists are checked: every number is a number.
std::string kind_of(const json& v) {
  if (v.is_number()) return "numbers";
  if (v.is_string()) return "strings";
  if (v.is_boolean()) return "booleans";
  if (v.is_object()) return "objects";
  if (v.is_array()) return "lists";
  return "nulls";
}

}  // namespace

std::vector<SweepPoint> expand_sweep(const json& j, const std::string& where) {
  // Paths (JSON pointers) of every list that stands for a value; layers_per_stage is a list by
  // nature, so only a list of lists sweeps it.
  std::vector<std::pair<json::json_pointer, std::string>> lists;
  // The walk below, copying a point and dumping a value all recurse: the depth is bounded first (a
  // JSON value built in memory can nest arbitrarily deep).
  if (const auto deep = too_deep(j, 1, ""))
    throw std::runtime_error(where + ": key '" + shortened_key(*deep) + "': nested deeper than " +
                             std::to_string(kMaxConfigDepth) + " levels");
  std::function<void(const json&, const json::json_pointer&, const std::string&)> walk =
      [&](const json& v, const json::json_pointer& ptr, const std::string& dotted) {
        if (v.is_object()) {
          for (const auto& [k, x] : v.items())
            walk(x, ptr / k, dotted.empty() ? k : dotted + "." + k);
        } else if (v.is_array()) {
          const bool natural_list = dotted == "model.layers_per_stage";
          if (!natural_list || (!v.empty() && v.front().is_array())) {
            if (v.empty())
              throw std::runtime_error(
                  where + (dotted.empty() ? ": the top level" : ": key '" + dotted + "'") +
                  ": an empty list sweeps nothing");
            // The values of one key are of one kind: `[1, "2", 4]` is a typo in the list, not a
            // point that does not fit (it was a row of errors, and the command succeeded).
            for (size_t i = 1; i < v.size(); ++i) {
              if (kind_of(v[i]) == kind_of(v[0])) continue;
              std::string shown = v[i].dump();  // JSON: escaped, one line
              if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
              throw std::runtime_error(where + ": key '" + dotted + "': the list mixes " +
                                       kind_of(v[0]) + " and " + kind_of(v[i]) + " (element " +
                                       std::to_string(i + 1) + " is " + shown + ")");
            }
            lists.emplace_back(ptr, dotted);
          }
        }
      };
  walk(j, json::json_pointer(), "");
  double count = 1;
  for (const auto& [ptr, dotted] : lists) count *= static_cast<double>(j.at(ptr).size());
  if (count > static_cast<double>(kMaxSweepPoints))
    throw std::runtime_error(where + ": the lists sweep " +
                             std::to_string(static_cast<int64_t>(count)) +
                             " combinations; at most " + std::to_string(kMaxSweepPoints));
  std::vector<SweepPoint> points;
  HardwareCache catalog;  // each catalog entry read once for the whole sweep
  size_t invalid = 0;
  std::vector<size_t> idx(lists.size(), 0);
  // Each point copies the configuration without its lists (each point sets its values): copying
  // the lists too made a sweep of n values O(n^2), 7 s for 20,000 points.
  json base = j;
  for (const auto& [ptr, dotted] : lists) base[ptr] = nullptr;
  for (;;) {
    SweepPoint p;
    p.json = base;
    for (size_t i = 0; i < lists.size(); ++i) {
      const json& value = j.at(lists[i].first).at(idx[i]);
      p.json[lists[i].first] = value;
      p.swept.emplace_back(lists[i].second,
                           value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (lists.empty()) {
      p.config = parse_config(p.json, where, &catalog);
      points.push_back(std::move(p));
      return points;
    }
    try {
      p.config = parse_config(p.json, where, &catalog);
    } catch (const std::runtime_error& e) {
      p.error = e.what();
      if (p.error.rfind(where + ": ", 0) == 0) p.error.erase(0, where.size() + 2);
      ++invalid;
    }
    points.push_back(std::move(p));
    size_t k = lists.size();
    while (k > 0) {
      --k;
      if (++idx[k] < j.at(lists[k].first).size()) break;
      idx[k] = 0;
      if (k == 0) {
        if (invalid == points.size()) throw std::runtime_error(where + ": " + points.front().error);
        return points;
      }
    }
  }
}

}  // namespace meshscope::predict
