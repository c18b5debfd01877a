// Labelling a torch.distributed.pipelining trace with its pipeline actions (see torch_pipeline.h).
#include "traces/import/torch_pipeline.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <tuple>

#include "traces/import/kineto_names.h"
#include "traces/import/torch_actions.h"
#include "traces/import/torch_inferred_actions.h"
#include "traces/import/torch_pipeline_groups.h"

namespace meshscope::traces::importer {
namespace {

struct ActionRange {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t span = 0;
  TorchAction action;
};

bool is_backward_engine_op(std::string_view name) {
  return name.starts_with("autograd::engine::evaluate_function");
}

// torch's point-to-point and collective ops and gloo's ranges: transfers (or waits for them),
// not compute, even inside a compute action (GPipe's "Forward i" wraps its recv and send).
bool is_comm_op(std::string_view name) {
  return name.starts_with("c10d::") || name.starts_with("gloo:") || name.starts_with("nccl:") ||
         name.starts_with("record_param_comms");
}

bool is_host_lane(const Timeline& t, uint16_t device, uint16_t lane) {
  const Device& d = t.devices[device];
  return lane < d.lanes.size() && d.lanes[lane].kind == LaneKind::kHost;
}

// The stage, microbatch and phase a span under `a` gets; `backward_op` picks the part of an
// OVERLAP_F_B action.
void label(Span& s, const TorchAction& a, bool backward_op) {
  if (a.type != TorchActionType::kOverlapFB) {
    s.stage = static_cast<int16_t>(a.stage);
    s.microbatch = a.microbatch;
    s.phase = phase_of(a.type);
    return;
  }
  const TorchSubAction* pick = &a.parts[0];
  for (int k = 0; k < a.part_count; ++k) {
    const bool part_backward = a.parts[static_cast<size_t>(k)].type != TorchActionType::kForward;
    if (part_backward == backward_op) {
      pick = &a.parts[static_cast<size_t>(k)];
      break;
    }
  }
  s.stage = static_cast<int16_t>(pick->stage);
  s.microbatch = pick->microbatch;
  s.phase = phase_of(pick->type);
}

// gloo's collective ranges on a CPU rank: the time its collective ran (waiting for its peers
// included, as an NCCL kernel's does on a GPU). Their names are torch's ProcessGroupGloo's
// ("gloo:" + op, read from libtorch_cpu.so of torch 2.15.0); op: the ones meshscope's collective
// records name.
struct GlooCollective {
  bool collective = false;
  std::optional<CollectiveOp> op;
};
GlooCollective gloo_collective(std::string_view name) {
  if (!name.starts_with("gloo:")) return {};
  name.remove_prefix(5);
  if (name == "all_reduce" || name == "sparse_all_reduce") return {true, CollectiveOp::kAllReduce};
  if (name == "all_gather") return {true, CollectiveOp::kAllGather};
  if (name == "all_to_all") return {true, CollectiveOp::kAllToAll};
  const bool other = name == "broadcast" || name == "reduce" || name == "gather" ||
                     name == "scatter" || name == "barrier";
  return {other, std::nullopt};
}

// The action whose range holds `t_ns` (ranges sorted by begin, not overlapping), or null.
const ActionRange* action_at(const std::vector<ActionRange>& ranges, int64_t t_ns) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), t_ns,
                             [](int64_t t, const ActionRange& r) { return t < r.begin_ns; });
  if (it == ranges.begin()) return nullptr;
  --it;
  return t_ns < it->end_ns ? &*it : nullptr;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

// Labels GPU spans: through launch flows from labelled host spans, else by the
// gpu_user_annotation action range around them on their stream.
// An NCCL SendRecv kernel whose direction the ops did not tell (imported as a send) moves data
// the way its transfer action says.
void direction_from_action(Span& s, TorchActionType action) {
  if (s.kind != SpanKind::kSend && s.kind != SpanKind::kRecv) return;
  if (action == TorchActionType::kSendForward || action == TorchActionType::kSendBackward) {
    s.kind = SpanKind::kSend;
  } else if (action == TorchActionType::kRecvForward || action == TorchActionType::kRecvBackward) {
    s.kind = SpanKind::kRecv;
  }
}

uint64_t label_gpu_spans(Timeline& t, const std::vector<bool>& gpu_device,
                         const std::vector<ActionRange>& host_ranges, uint16_t host_device,
                         uint16_t host_lane) {
  uint64_t labelled = 0;
  for (const Flow& f : t.flows) {
    const Span& from = t.spans[f.from];
    Span& to = t.spans[f.to];
    if (from.stage < 0 || !gpu_device[to.device] || to.stage >= 0) continue;
    to.stage = from.stage;
    to.microbatch = from.microbatch;
    to.phase = from.phase;
    if (from.device == host_device && from.lane == host_lane) {
      if (const ActionRange* r = action_at(host_ranges, from.begin_ns)) {
        direction_from_action(to, r->action.type);
      }
    }
    ++labelled;
  }
  // Stream-side ranges, per (device, lane); spans are sorted by (device, lane, begin).
  std::map<std::pair<uint16_t, uint16_t>, std::vector<ActionRange>> ranges;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (!gpu_device[s.device] || s.kind != SpanKind::kAnnotation) continue;
    if (auto a = parse_torch_range(t.span_name(s)); a && a->stage >= 0) {
      ranges[{s.device, s.lane}].push_back({s.begin_ns, s.end_ns, i, std::move(*a)});
    }
  }
  for (auto& [key, list] : ranges) {
    std::sort(list.begin(), list.end(),
              [](const ActionRange& a, const ActionRange& b) { return a.begin_ns < b.begin_ns; });
  }
  for (Span& s : t.spans) {
    if (!gpu_device[s.device] || s.stage >= 0) continue;
    const auto it = ranges.find({s.device, s.lane});
    if (it == ranges.end()) continue;
    if (const ActionRange* r = action_at(it->second, s.begin_ns)) {
      label(s, r->action, is_backward_engine_op(t.span_name(s)));
      direction_from_action(s, r->action.type);
      ++labelled;
    }
  }
  return labelled;
}

}  // namespace

TorchPipelineLabels label_torch_pipeline(Timeline& t) {
  TorchPipelineLabels out;
  // Action ranges on host threads, by (device, lane).
  std::map<std::pair<uint16_t, uint16_t>, std::vector<ActionRange>> by_lane;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (s.kind != SpanKind::kAnnotation || !is_host_lane(t, s.device, s.lane)) continue;
    if (auto a = parse_torch_range(t.span_name(s))) {
      by_lane[{s.device, s.lane}].push_back({s.begin_ns, s.end_ns, i, std::move(*a)});
    }
  }
  uint16_t device = 0, lane = 0;
  std::vector<ActionRange> ranges;
  bool inferred = false;
  if (!by_lane.empty()) {
    auto driving = by_lane.begin();
    for (auto it = by_lane.begin(); it != by_lane.end(); ++it) {
      if (it->second.size() > driving->second.size()) driving = it;
    }
    std::tie(device, lane) = driving->first;
    ranges = std::move(driving->second);
  }
  const int rank = static_cast<int>(
      metadata_int(t, "rank").value_or(t.devices.empty() ? 0 : t.devices[device].rank));
  if (ranges.empty()) {
    // No ranges of its own (Schedule1F1B): the actions its ops show; one stage, stage = rank.
    InferredActions found = infer_single_stage_actions(t, rank);
    if (found.actions.empty()) return out;
    device = found.device;
    lane = found.lane;
    for (InferredAction& a : found.actions) {
      ranges.push_back({a.begin_ns, a.end_ns, UINT32_MAX, std::move(a.action)});
    }
    inferred = true;
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const ActionRange& a, const ActionRange& b) { return a.begin_ns < b.begin_ns; });
  bool single_stage = inferred;
  for (ActionRange& r : ranges) {
    if (r.action.stage < 0 && r.action.type != TorchActionType::kOverlapFB) {
      single_stage = true;
      r.action.stage = rank;  // GPipe: the rank's one stage
      r.action.text = torch_action_text(r.action.type, r.action.stage, r.action.microbatch);
    }
  }
  out.actions = static_cast<int>(ranges.size());

  std::vector<bool> gpu_device(t.devices.size(), false);
  bool has_gpu = false;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    for (const Lane& l : t.devices[d].lanes) {
      if (l.kind != LaneKind::kHost) gpu_device[d] = true;
    }
    has_gpu = has_gpu || gpu_device[d];
  }
  out.cpu_device = !has_gpu;

  // GPipe's and 1F1B's "Forward i" / "Backward i" allocate their receive buffer and then wait in
  // a blocking c10d::recv_ before they compute: what begins before the action's last such receive
  // ends is no compute of it (the allocation had read as the first compute, and a downstream
  // rank's pipeline fill as peer wait; the replay starts an action's work there too).
  // A single-stage rank's place in its pipeline shows in its forward actions: the first stage
  // receives no input, the last sends no output (torch_pipeline_groups.h).
  std::vector<int64_t> received_at(ranges.size(), INT64_MIN);
  bool forward_receives = false, forward_sends = false;
  for (const Span& s : t.spans) {
    if (s.device != device || s.lane != lane) continue;
    const std::string_view name = t.span_name(s);
    if (name != "c10d::recv_" && name != "c10d::send") continue;
    const ActionRange* r = action_at(ranges, s.begin_ns);
    if (r == nullptr) continue;
    const bool forward = r->action.type == TorchActionType::kForward;
    if (name == "c10d::send") {
      forward_sends = forward_sends || forward;
      continue;
    }
    forward_receives = forward_receives || forward;
    int64_t& at = received_at[static_cast<size_t>(r - ranges.data())];
    at = std::max(at, s.end_ns);
  }

  // The driving thread's spans, in lane order (begin, end descending): each takes the labels of
  // the action it begins in; outermost ops of compute actions become compute on a CPU rank.
  std::vector<int64_t> open_op_ends;  // ends of the enclosing host ops
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    Span& s = t.spans[i];
    if (s.device != device || s.lane != lane) continue;
    const ActionRange* r = action_at(ranges, s.begin_ns);
    if (r != nullptr && r->span == i) {
      label(s, r->action, false);
      if (r->action.type == TorchActionType::kOverlapFB) s.phase = Phase::kNone;
      ++out.labelled_spans;
      continue;
    }
    while (!open_op_ends.empty() && open_op_ends.back() <= s.begin_ns) open_op_ends.pop_back();
    // Python frames (with_stack) wrap ops and the action ranges alike: no op is outermost
    // beneath one that began before its action, so they are not ops here.
    const bool op = s.kind == SpanKind::kHost && !is_python_frame(t.span_name(s));
    const bool outermost = op && open_op_ends.empty();
    if (op) open_op_ends.push_back(s.end_ns);
    if (r == nullptr) continue;
    label(s, r->action, is_backward_engine_op(t.span_name(s)));
    ++out.labelled_spans;
    if (out.cpu_device && outermost && is_compute(r->action.type) && s.end_ns <= r->end_ns &&
        !is_comm_op(t.span_name(s)) &&
        s.begin_ns >= received_at[static_cast<size_t>(r - ranges.data())]) {
      s.kind = SpanKind::kCompute;
    }
  }
  out.labelled_spans += label_gpu_spans(t, gpu_device, ranges, device, lane);
  if (inferred) {
    // The inferred actions as ranges of their own, named as torch would name them.
    for (const ActionRange& r : ranges) {
      Span a;
      a.begin_ns = r.begin_ns;
      a.end_ns = r.end_ns;
      a.name = t.strings.intern(r.action.text + " (inferred)");
      a.device = device;
      a.lane = lane;
      a.kind = SpanKind::kAnnotation;
      label(a, r.action, false);
      t.add_span(a);
    }
    t.sort_spans();
    t.metadata["pipeline_actions_inferred"] = "from ops (no action ranges in the trace)";
  }

  if (out.cpu_device) {
    Device& d = t.devices[device];
    d.lanes[lane].kind = LaneKind::kCompute;
    d.rank = rank;
    d.name = "rank " + std::to_string(rank) + " \u00b7 CPU";
  }
  // One pipeline: the rank's place in it is its rank (the default group is the pp group), with
  // no data or tensor parallelism beside it.
  for (size_t d = 0; d < t.devices.size(); ++d) {
    if (gpu_device[d] || (out.cpu_device && d == device)) t.devices[d].coord = {0, rank, 0};
  }

  if (out.cpu_device) {
    for (uint32_t i = 0; i < t.spans.size(); ++i) {
      Span& s = t.spans[i];
      if (s.device != device || s.kind != SpanKind::kAnnotation) continue;
      const GlooCollective c = gloo_collective(t.span_name(s));
      if (!c.collective) continue;
      s.kind = SpanKind::kCollective;
      if (c.op) t.set_collective(i, Collective{.op = *c.op});
    }
  }

  // The first step's actions, as torch writes them.
  const StepWindow first = t.steps.empty() ? t.extent() : t.steps.front();
  std::vector<std::string> order;
  std::set<int> stages;
  for (const ActionRange& r : ranges) {
    if (t.steps.empty() || (r.begin_ns >= first.begin_ns && r.begin_ns < first.end_ns)) {
      order.push_back(r.action.text);
    }
    if (r.action.type == TorchActionType::kOverlapFB) {
      for (int k = 0; k < r.action.part_count; ++k)
        stages.insert(r.action.parts[static_cast<size_t>(k)].stage);
    } else {
      stages.insert(r.action.stage);
    }
  }
  if (single_stage && !order.empty()) {
    // GPipe and 1F1B reduce gradients after their last backward without a range of their own
    // (PipelineScheduleSingle's perform_reduce_grad); torch's pipeline_order lists it so.
    order.push_back(torch_action_text(TorchActionType::kReduceGrad, rank, -1));
    order.push_back(torch_action_text(TorchActionType::kWaitReduceGrad, rank, -1));
  }
  std::vector<std::string> stage_text;
  for (int s : stages) stage_text.push_back(std::to_string(s));
  t.metadata["pipeline_actions"] = join(order);
  t.metadata["pipeline_stages"] = join(stage_text);
  if (single_stage) {
    t.metadata["pipeline_position"] = !forward_receives ? (forward_sends ? "first" : "alone")
                                      : forward_sends   ? "middle"
                                                        : "last";
  }
  t.metadata["pipeline_runtime"] = "torch.distributed.pipelining";
  return out;
}

std::map<int, std::vector<std::string>> torch_action_orders(const Timeline& t) {
  std::map<int, std::vector<std::string>> out;
  for (const auto& [rank, value] : per_rank_metadata(t, "pipeline_actions")) {
    std::vector<std::string> tokens;
    size_t i = 0;
    while (i < value.size()) {
      const size_t j = std::min(value.find(' ', i), value.size());
      if (j > i) tokens.push_back(value.substr(i, j - i));
      i = j + 1;
    }
    out[rank] = std::move(tokens);
  }
  return out;
}

size_t pair_torch_transfers(Timeline& t) {
  // The pipeline group of each rank, and its index in that group (its pipeline rank).
  const std::vector<std::vector<int>> groups = torch_pipeline_groups(t);
  std::map<int, std::pair<int, int>> group_of;  // rank -> (group, pipeline rank)
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t k = 0; k < groups[g].size(); ++k) {
      group_of[groups[g][k]] = {static_cast<int>(g), static_cast<int>(k)};
    }
  }
  const auto group_index = [&](int rank) {
    const auto it = group_of.find(rank);
    return it == group_of.end() ? 0 : it->second.first;
  };
  // One pipeline too: each rank's file can only say stage = its rank, which is no stage where the
  // files name no rank (no distributedInfo: every GPipe rank had read as stage 0) or the group is
  // not ranks 0.. (the second replica's traces alone).
  if (!groups.empty()) number_single_stage_ranks(t, groups);
  // Gradient accumulation under Schedule1F1B: each iteration numbers its microbatches from 0.
  renumber_accumulated_iterations(t);
  if (groups.size() > 1) {
    for (Device& d : t.devices) {
      const auto it = group_of.find(d.rank);
      if (it == group_of.end()) continue;
      d.coord.dp = it->second.first;
      d.coord.pp = it->second.second;
    }
    // gloo names no group on its collectives. In a job of several pipelines whose ranks list
    // their data-parallel group, they are taken as that group's: the gradient reduction data
    // parallelism adds (an assumption; a world collective would be matched in dp pairs).
    const std::set<int> dp_listed = ranks_listing_their_dp_group(t, groups);
    for (SpanCollective& c : t.collectives) {
      const Span& s = t.spans[c.span];
      if (dp_listed.count(t.devices[s.device].rank) && t.span_name(s).starts_with("gloo:")) {
        c.collective.group = GroupKind::kDp;
      }
    }
  }
  // Which rank ran each stage of each group: from the spans of compute phases.
  std::map<std::pair<int, int>, int> owner;  // (group, stage) -> rank
  for (const Span& s : t.spans) {
    if (s.stage < 0 || s.phase == Phase::kNone || s.kind != SpanKind::kAnnotation) continue;
    const int rank = t.devices[s.device].rank;
    owner.emplace(std::pair{group_index(rank), static_cast<int>(s.stage)}, rank);
  }
  if (owner.empty()) return 0;
  enum class Record : uint8_t { kC10dOp, kGlooRange, kDeviceTransfer };
  // (record, from stage, to stage, phase, microbatch) -> spans in time order.
  using Key = std::tuple<int, Record, int, int, Phase, int32_t>;  // group first
  std::map<Key, std::vector<std::pair<int64_t, uint32_t>>> sends, recvs;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (s.stage < 0 || (s.phase != Phase::kForward && s.phase != Phase::kBackward)) continue;
    const std::string_view n = t.span_name(s);
    std::optional<Record> record;
    bool send = false;
    if (n == "c10d::send" || n == "c10d::recv_") {
      record = Record::kC10dOp;
      send = n == "c10d::send";
    } else if (n == "gloo:send" || n == "gloo:recv") {
      record = Record::kGlooRange;
      send = n == "gloo:send";
    } else if (s.kind == SpanKind::kSend || s.kind == SpanKind::kRecv) {
      record = Record::kDeviceTransfer;
      send = s.kind == SpanKind::kSend;
    }
    if (!record) continue;
    const int step = s.phase == Phase::kForward ? 1 : -1;
    const int from = send ? s.stage : s.stage - step;
    const int to = send ? s.stage + step : s.stage;
    // Between stages of one rank torch passes tensors locally (the V-shape's turn).
    const int group = group_index(t.devices[s.device].rank);
    const auto fo = owner.find({group, from}), tt = owner.find({group, to});
    if (fo == owner.end() || tt == owner.end() || fo->second == tt->second) continue;
    (send ? sends : recvs)[{group, *record, from, to, s.phase, s.microbatch}].push_back(
        {s.begin_ns, i});
  }
  // gloo's send range opens when c10d::send, which hands the tensor to gloo, is about to return
  // (its Work is made then), at times after the peer's recv ended: the transfer began at the
  // c10d::send, so a gloo:recv range is paired with the c10d::send that posted it.
  for (auto& [key, list] : sends) {
    if (std::get<1>(key) != Record::kGlooRange) continue;
    Key posted = key;
    std::get<1>(posted) = Record::kC10dOp;
    const auto op = sends.find(posted);
    if (op != sends.end() && op->second.size() == list.size()) list = op->second;
  }
  // meshscope's export of a paired job holds its flows already: pair nothing twice.
  std::set<std::pair<uint32_t, uint32_t>> paired;
  for (const Flow& f : t.flows) paired.insert({f.from, f.to});
  size_t added = 0;
  for (auto& [key, list] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) continue;
    // The op that posts a recv returns at once, often before the peer's send began (torch posts
    // its irecvs ahead): a flow to it would run back in time, and Perfetto drops those. Where
    // gloo's range covers the same receives until their data came, the flow ends there only.
    if (std::get<1>(key) == Record::kC10dOp) {
      Key covered = key;
      std::get<1>(covered) = Record::kGlooRange;
      const auto range = recvs.find(covered);
      if (range != recvs.end() && range->second.size() == it->second.size()) continue;
    }
    std::sort(list.begin(), list.end());
    std::sort(it->second.begin(), it->second.end());
    const size_t n = std::min(list.size(), it->second.size());
    for (size_t k = 0; k < n; ++k) {
      if (!paired.insert({list[k].second, it->second[k].second}).second) continue;
      t.add_flow(list[k].second, it->second[k].second);
      ++added;
    }
  }
  std::string owners;  // the first pipeline group's
  for (const auto& [key, rank] : owner) {
    if (key.first == 0) owners += (owners.empty() ? "" : " ") + std::to_string(rank);
  }
  t.metadata["pipeline_stage_owner"] = owners;
  // The job's shape as far as the trace shows it: stages and their ranks, microbatches. dp and tp
  // stay unknown (0): process groups (pg_config) are not read.
  std::set<int> stage_ranks;
  for (const auto& [stage, rank] : owner) stage_ranks.insert(rank);
  int32_t last_microbatch = -1;
  for (const Span& s : t.spans) {
    if (s.kind == SpanKind::kAnnotation && s.stage >= 0 && s.phase != Phase::kNone)
      last_microbatch = std::max(last_microbatch, s.microbatch);
  }
  t.run.mesh.pp = static_cast<int>(stage_ranks.size());
  t.run.stages = static_cast<int>(owner.size());
  t.run.virtual_stages = t.run.stages / std::max(t.run.mesh.pp, 1);
  t.run.microbatches = last_microbatch + 1;
  if (t.run.schedule.empty()) t.run.schedule = "torch.distributed.pipelining";
  return added;
}

}  // namespace meshscope::traces::importer
