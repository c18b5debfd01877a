// Pipeline groups of a torch pipelining job (see torch_pipeline_groups.h).
#include "traces/import/torch_pipeline_groups.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "traces/number_text.h"

namespace meshscope::traces::importer {

std::optional<int64_t> metadata_int(const Timeline& t, const std::string& key) {
  const auto it = t.metadata.find(key);
  if (it == t.metadata.end()) return std::nullopt;
  return parse_whole_int(it->second);
}

// The metadata `name` of every rank of a merged Timeline ("rank R.name"), or of a single one.
std::map<int, std::string> per_rank_metadata(const Timeline& t, std::string_view name) {
  std::map<int, std::string> out;
  for (const auto& [key, value] : t.metadata) {
    if (key == name) {
      out[static_cast<int>(metadata_int(t, "rank").value_or(0))] = value;
      continue;
    }
    if (!key.starts_with("rank ") || key.size() < 6 + name.size() || !key.ends_with(name) ||
        key[key.size() - name.size() - 1] != '.') {
      continue;
    }
    const std::string number = key.substr(5, key.size() - 5 - name.size() - 1);
    int rank = 0;
    const auto r = std::from_chars(number.data(), number.data() + number.size(), rank);
    if (r.ec != std::errc() || r.ptr != number.data() + number.size()) continue;
    out[rank] = value;
  }
  return out;
}

namespace {

std::vector<int> parse_int_list(std::string_view text, char sep) {
  std::vector<int> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t j = std::min(text.find(sep, i), text.size());
    int v = 0;
    const auto r = std::from_chars(text.data() + i, text.data() + j, v);
    if (r.ec == std::errc() && r.ptr == text.data() + j) out.push_back(v);
    i = j + 1;
  }
  return out;
}

// The groups of a rank's "process_groups" ("name=r,r,...;name=..."), each its members in order.
std::vector<std::vector<int>> parse_process_groups(std::string_view text) {
  std::vector<std::vector<int>> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t j = std::min(text.find(';', i), text.size());
    const std::string_view group(text.data() + i, j - i);
    i = j + 1;
    const size_t eq = group.find('=');
    if (eq != std::string_view::npos) out.push_back(parse_int_list(group.substr(eq + 1), ','));
  }
  return out;
}

// The stages each traced rank ran ("pipeline_stages").
using StagesByRank = std::map<int, std::set<int>>;
StagesByRank stages_by_rank(const Timeline& t) {
  StagesByRank stages;
  for (const auto& [rank, text] : per_rank_metadata(t, "pipeline_stages")) {
    const std::vector<int> v = parse_int_list(text, ' ');
    stages[rank] = std::set<int>(v.begin(), v.end());
  }
  return stages;
}

// Whether the traced ones among `members` ran no stage twice (a data-parallel group's members
// run the same stages, a pipeline group's each its own).
bool no_stage_twice(const std::vector<int>& members, const StagesByRank& stages) {
  std::set<int> seen;
  for (const int m : members) {
    const auto st = stages.find(m);
    if (st == stages.end()) continue;
    for (const int s : st->second)
      if (!seen.insert(s).second) return false;
  }
  return true;
}

// Whether `members` could be one pipeline (torch_pipeline_groups.h): by the places of its traced
// single-stage ranks ("pipeline_position"), else by the stages its traced ranks ran.
bool could_be_pipeline(const std::vector<int>& members, const StagesByRank& stages,
                       const std::map<int, std::string>& positions) {
  int traced = 0, placed = 0, first = 0, last = 0, middle = 0;
  for (const int m : members) {
    if (!stages.count(m)) continue;
    ++traced;
    const auto p = positions.find(m);
    if (p == positions.end()) continue;
    ++placed;
    const bool alone = p->second == "alone";  // no input, no output: it is both ends
    first += alone || p->second == "first";
    last += alone || p->second == "last";
    middle += p->second == "middle";
  }
  if (placed == 0) return no_stage_twice(members, stages);
  if (placed != traced) return false;  // single-stage and multi-stage ranks: not one schedule
  const int n = static_cast<int>(members.size());
  if (first > 1 || last > 1 || middle > n - 2) return false;
  return traced < n || (first == 1 && last == 1);
}

// `text` ("2F0", "2REDUCE_GRAD", "2B1 (inferred)") with its leading stage number made `stage`.
std::string with_stage(std::string_view text, int stage) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0) return std::string(text);
  return std::to_string(stage) + std::string(text.substr(i));
}

// The metadata key of `name` for `rank`: "rank R.name" in a merged Timeline, else `name`.
std::string rank_key(const Timeline& t, int rank, const std::string& name) {
  const std::string merged = "rank " + std::to_string(rank) + "." + name;
  return t.metadata.count(merged) ? merged : name;
}

}  // namespace

std::vector<int> torch_untraced_ranks(const Timeline& t) {
  const StagesByRank stages = stages_by_rank(t);
  const std::map<int, std::string> positions = per_rank_metadata(t, "pipeline_position");
  const std::map<int, std::string> groups = per_rank_metadata(t, "process_groups");
  // Each traced rank's pipeline: the smallest of its groups that could be one (with dp = 1, the
  // group of every rank); of two that small, one whose ranks are all traced (a replica's GPipe
  // ranks 2 and 3 alone: their data-parallel groups {0, 2} and {1, 3} could be pipelines too, with
  // 0 and 1 untraced, and had been taken first).
  const auto whole = [&](const std::vector<int>& members) {
    return std::all_of(members.begin(), members.end(), [&](int m) { return stages.count(m) > 0; });
  };
  std::set<int> missing;
  for (const auto& [rank, mine] : stages) {
    const auto text = groups.find(rank);
    if (text == groups.end()) continue;
    std::vector<int> pipeline;
    for (const std::vector<int>& members : parse_process_groups(text->second)) {
      if (members.size() < 2) continue;
      const bool better = pipeline.empty() || members.size() < pipeline.size() ||
                          (members.size() == pipeline.size() && whole(members) && !whole(pipeline));
      if (!better) continue;
      if (std::find(members.begin(), members.end(), rank) == members.end()) continue;
      if (could_be_pipeline(members, stages, positions)) pipeline = members;
    }
    for (const int r : pipeline)
      if (!stages.count(r)) missing.insert(r);
  }
  return {missing.begin(), missing.end()};
}

std::vector<std::vector<int>> torch_pipeline_groups(const Timeline& t) {
  const StagesByRank stages = stages_by_rank(t);
  const std::map<int, std::string> positions = per_rank_metadata(t, "pipeline_position");
  std::vector<std::vector<int>> groups;
  std::set<int> placed;
  for (const auto& [rank, text] : per_rank_metadata(t, "process_groups")) {
    if (placed.count(rank) || !stages.count(rank)) continue;
    // Its pipeline group: a group of 2+ ranks that is not every rank, whose members all ran
    // stages of this job and could be one pipeline.
    for (const std::vector<int>& members : parse_process_groups(text)) {
      if (members.size() < 2 || members.size() >= stages.size()) continue;
      const bool traced =
          std::all_of(members.begin(), members.end(), [&](int m) { return stages.count(m) > 0; });
      if (!traced || !could_be_pipeline(members, stages, positions)) continue;
      groups.push_back(members);
      placed.insert(members.begin(), members.end());
      break;
    }
  }
  if (groups.empty() || placed.size() != stages.size()) {
    std::vector<int> all;
    for (const auto& [rank, st] : stages) all.push_back(rank);
    return {all};
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::set<int> ranks_listing_their_dp_group(const Timeline& t,
                                           const std::vector<std::vector<int>>& groups) {
  std::set<int> out;
  if (groups.size() < 2) return out;
  for (const std::vector<int>& g : groups) {
    if (g.size() != groups.front().size()) return out;
  }
  const std::map<int, std::string> listed = per_rank_metadata(t, "process_groups");
  for (size_t k = 0; k < groups.front().size(); ++k) {
    std::set<int> dp;
    for (const std::vector<int>& g : groups) dp.insert(g[k]);
    for (const int rank : dp) {
      const auto text = listed.find(rank);
      if (text == listed.end()) continue;
      for (const std::vector<int>& members : parse_process_groups(text->second)) {
        if (std::set<int>(members.begin(), members.end()) == dp) {
          out.insert(rank);
          break;
        }
      }
    }
  }
  return out;
}

void number_single_stage_ranks(Timeline& t, const std::vector<std::vector<int>>& groups) {
  const std::map<int, std::string> positions = per_rank_metadata(t, "pipeline_position");
  std::map<int, int> stage_of;  // single-stage rank -> its index in its group
  for (const std::vector<int>& members : groups) {
    for (size_t k = 0; k < members.size(); ++k) {
      if (positions.count(members[k])) stage_of[members[k]] = static_cast<int>(k);
    }
  }
  if (stage_of.empty()) return;
  std::vector<int> device_stage(t.devices.size(), -1);
  for (size_t d = 0; d < t.devices.size(); ++d) {
    const auto it = stage_of.find(t.devices[d].rank);
    if (it != stage_of.end()) device_stage[d] = it->second;
  }
  for (Span& s : t.spans) {
    const int stage = device_stage[s.device];
    if (stage < 0 || s.stage < 0 || s.stage == stage) continue;
    s.stage = static_cast<int16_t>(stage);
    const std::string_view name = t.span_name(s);
    if (s.kind == SpanKind::kAnnotation && name.ends_with(" (inferred)")) {
      s.name = t.strings.intern(with_stage(name, stage));
    }
  }
  for (const auto& [rank, stage] : stage_of) {
    t.metadata[rank_key(t, rank, "pipeline_stages")] = std::to_string(stage);
    std::string& actions = t.metadata[rank_key(t, rank, "pipeline_actions")];
    std::string renumbered;
    size_t i = 0;
    while (i < actions.size()) {
      const size_t j = std::min(actions.find(' ', i), actions.size());
      if (j > i) {
        renumbered += (renumbered.empty() ? "" : " ") +
                      with_stage(std::string_view(actions).substr(i, j - i), stage);
      }
      i = j + 1;
    }
    actions = renumbered;
  }
}

}  // namespace meshscope::traces::importer
