// Recovering Schedule1F1B's actions from its ops (see torch_inferred_actions.h).
#include "traces/import/torch_inferred_actions.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/kineto_names.h"
#include "traces/import/torch_pipeline_groups.h"

namespace meshscope::traces::importer {
namespace {

enum class OpClass : uint8_t { kSend, kRecv, kForward, kBackward, kOther };

struct Item {
  int64_t begin_ns, end_ns;
  OpClass cls;
  bool bookkeeping;  // allocating a buffer or splitting the batch, no stage's compute
};

// The ops torch's single-stage runtime runs around a forward that are no stage's compute: the
// recv buffer's allocation and the split of the batch (or target) into microbatches.
bool is_bookkeeping_op(std::string_view n) {
  return n.starts_with("aten::empty") || n == "aten::tensor_split" ||
         n.starts_with("aten::split") || n == "aten::chunk";
}

bool is_host_lane(const Timeline& t, const Span& s) {
  const Device& d = t.devices[s.device];
  return s.lane < d.lanes.size() && d.lanes[s.lane].kind == LaneKind::kHost;
}

// The tokens of a "pipeline_actions" value (space-separated, as torch writes them).
std::vector<std::string> tokens_of(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t j = std::min(text.find(' ', i), text.size());
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::optional<TorchAction> parse_token(const std::string& token) {
  return parse_torch_range("PP:" + token);
}

struct ForwardCounts {
  int forwards = 0;   // in the rank's first step
  int first_end = 0;  // forwards run when its backwards first caught up with them; 0: never
};

ForwardCounts count_forwards(const std::vector<std::string>& tokens) {
  ForwardCounts c;
  int backwards = 0;
  for (const std::string& token : tokens) {
    const std::optional<TorchAction> a = parse_token(token);
    if (!a) continue;
    if (a->type == TorchActionType::kForward) ++c.forwards;
    if (a->type != TorchActionType::kBackward) continue;
    if (++backwards == c.forwards && c.first_end == 0) c.first_end = c.forwards;
  }
  return c;
}

// The metadata key of `name` for `rank`: "rank R.name" in a merged Timeline, else `name`.
std::string key_of(const Timeline& t, int rank, const std::string& name) {
  const std::string merged = "rank " + std::to_string(rank) + "." + name;
  return t.metadata.count(merged) ? merged : name;
}

}  // namespace

InferredActions infer_single_stage_actions(const Timeline& t, int stage) {
  InferredActions out;
  // The thread issuing the most c10d point-to-point ops.
  std::map<std::pair<uint16_t, uint16_t>, int> p2p;
  for (const Span& s : t.spans) {
    const std::string_view n = t.span_name(s);
    if (is_host_lane(t, s) && (n == "c10d::send" || n == "c10d::recv_")) ++p2p[{s.device, s.lane}];
  }
  if (p2p.empty()) return out;
  const auto best = std::max_element(
      p2p.begin(), p2p.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  out.device = best->first.first;
  out.lane = best->first.second;

  // Spans of that thread that start a flow to a later span of the same thread (fwdbwd).
  std::vector<bool> starts_fwdbwd(t.spans.size(), false);
  for (const Flow& f : t.flows) {
    const Span& a = t.spans[f.from];
    const Span& b = t.spans[f.to];
    if (a.device == out.device && a.lane == out.lane && b.device == a.device && b.lane == a.lane &&
        b.begin_ns >= a.end_ns) {
      starts_fwdbwd[f.from] = true;
    }
  }

  // Outermost host ops in order, each with whether it (or an op inside it) starts such a flow.
  std::vector<Item> items;
  std::vector<bool> item_linked;
  int64_t open_end = INT64_MIN;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (s.device != out.device || s.lane != out.lane || s.kind != SpanKind::kHost) continue;
    if (is_python_frame(t.span_name(s))) continue;  // with_stack's frames wrap the ops
    if (s.begin_ns < open_end) {                    // nested in the current outermost op
      if (starts_fwdbwd[i]) item_linked.back() = true;
      continue;
    }
    open_end = s.end_ns;
    const std::string_view n = t.span_name(s);
    OpClass cls = OpClass::kForward;
    if (n == "c10d::send") {
      cls = OpClass::kSend;
    } else if (n == "c10d::recv_") {
      cls = OpClass::kRecv;
    } else if (n.starts_with("autograd::engine::evaluate_function")) {
      cls = OpClass::kBackward;
    } else if (n.starts_with("c10d::") || n.starts_with("ProfilerStep")) {
      cls = OpClass::kOther;
    }
    items.push_back({s.begin_ns, s.end_ns, cls, is_bookkeeping_op(n)});
    item_linked.push_back(starts_fwdbwd[i]);
  }

  // Step windows: a run never spans two steps (one step's last ops and the next one's first
  // forward can meet without a transfer op between them).
  std::vector<StepWindow> steps = t.steps;
  std::sort(steps.begin(), steps.end(),
            [](const StepWindow& a, const StepWindow& b) { return a.begin_ns < b.begin_ns; });
  // The last step beginning at or before `ns` (-1: before the first); binary search.
  const auto step_of = [&](int64_t ns) {
    const auto it = std::upper_bound(steps.begin(), steps.end(), ns,
                                     [](int64_t t, const StepWindow& w) { return t < w.begin_ns; });
    return static_cast<int>(it - steps.begin()) - 1;
  };
  // Runs of forward / backward ops between transfer ops.
  struct Run {
    size_t first, last;
    OpClass cls;
    bool linked;
    bool computes;  // holds an op other than bookkeeping
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < items.size(); ++i) {
    const OpClass c = items[i].cls;
    if (c != OpClass::kForward && c != OpClass::kBackward) continue;
    if (!runs.empty() && runs.back().cls == c && runs.back().last + 1 == i &&
        step_of(items[runs.back().last].begin_ns) == step_of(items[i].begin_ns)) {
      runs.back().last = i;
      runs.back().linked = runs.back().linked || item_linked[i];
      runs.back().computes = runs.back().computes || !items[i].bookkeeping;
    } else {
      runs.push_back({i, i, c, item_linked[i], !items[i].bookkeeping});
    }
  }
  // A step without a backward ran forwards only (schedule.eval: no autograd, so no fwdbwd
  // links): there its forwards are the runs that compute.
  std::set<int> steps_with_backward;
  for (const Run& r : runs) {
    if (r.cls == OpClass::kBackward) steps_with_backward.insert(step_of(items[r.first].begin_ns));
  }
  std::erase_if(runs, [&](const Run& r) {
    if (r.cls != OpClass::kForward || r.linked) return false;
    return steps_with_backward.count(step_of(items[r.first].begin_ns)) > 0 || !r.computes;
  });

  // Ranges over the recvs before and the sends after each run; numbering per step window.
  int current_step = INT32_MIN, forwards = 0, backwards = 0;
  int64_t previous_end = INT64_MIN;
  for (size_t r = 0; r < runs.size(); ++r) {
    const Run& run = runs[r];
    const size_t gap_begin = r == 0 ? 0 : runs[r - 1].last + 1;
    const size_t gap_end = r + 1 < runs.size() ? runs[r + 1].first : items.size();
    int64_t begin = items[run.first].begin_ns;
    for (size_t i = gap_begin; i < run.first; ++i) {
      if (items[i].cls == OpClass::kRecv) {
        begin = std::min(begin, items[i].begin_ns);
        break;
      }
    }
    begin = std::max(begin, previous_end);
    int64_t end = items[run.last].end_ns;
    for (size_t i = run.last + 1; i < gap_end; ++i) {
      if (items[i].cls == OpClass::kRecv) break;
      if (items[i].cls == OpClass::kSend) end = std::max(end, items[i].end_ns);
    }
    const int step = step_of(items[run.first].begin_ns);
    if (step != current_step) {
      current_step = step;
      forwards = backwards = 0;
    }
    InferredAction a;
    a.begin_ns = begin;
    a.end_ns = end;
    a.action.type =
        run.cls == OpClass::kForward ? TorchActionType::kForward : TorchActionType::kBackward;
    a.action.stage = stage;
    a.action.microbatch = run.cls == OpClass::kForward ? forwards++ : backwards++;
    a.action.text = torch_action_text(a.action.type, stage, a.action.microbatch);
    out.actions.push_back(std::move(a));
    previous_end = end;
  }
  return out;
}

int renumber_accumulated_iterations(Timeline& t) {
  const std::map<int, std::string> inferred = per_rank_metadata(t, "pipeline_actions_inferred");
  const std::map<int, std::string> actions = per_rank_metadata(t, "pipeline_actions");
  const std::map<int, std::string> positions = per_rank_metadata(t, "pipeline_position");
  int n = 0;
  std::map<int, int> forwards;  // inferred rank -> its forwards in its first step
  for (const auto& [rank, unused] : inferred) {
    const auto text = actions.find(rank);
    if (text == actions.end()) return 0;
    const ForwardCounts c = count_forwards(tokens_of(text->second));
    forwards[rank] = c.forwards;
    const auto position = positions.find(rank);
    const bool before_last = position != positions.end() &&
                             (position->second == "first" || position->second == "middle");
    if (before_last && c.first_end > 0 && c.first_end < c.forwards) n = std::max(n, c.first_end);
  }
  if (n == 0) return 0;
  for (const auto& [rank, count] : forwards) {
    if (count % n != 0) return 0;  // no whole iterations of n: left as read
  }
  std::vector<bool> renumbered(t.devices.size(), false);
  for (size_t d = 0; d < t.devices.size(); ++d) renumbered[d] = forwards.count(t.devices[d].rank);
  for (Span& s : t.spans) {
    if (!renumbered[s.device] || s.stage < 0 || s.microbatch < n) continue;
    s.microbatch %= n;
    if (s.kind == SpanKind::kAnnotation && t.span_name(s).ends_with(" (inferred)")) {
      const TorchActionType type =
          s.phase == Phase::kForward ? TorchActionType::kForward : TorchActionType::kBackward;
      s.name = t.strings.intern(torch_action_text(type, s.stage, s.microbatch) + " (inferred)");
    }
  }
  for (const auto& [rank, count] : forwards) {
    std::string& text = t.metadata[key_of(t, rank, "pipeline_actions")];
    std::string out;
    for (const std::string& token : tokens_of(text)) {
      const std::optional<TorchAction> a = parse_token(token);
      const bool numbered = a && a->stage >= 0 && a->microbatch >= 0;
      out += (out.empty() ? "" : " ") +
             (numbered ? torch_action_text(a->type, a->stage, a->microbatch % n) : token);
    }
    text = out;
  }
  return n;
}

}  // namespace meshscope::traces::importer
