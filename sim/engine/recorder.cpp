// Span recording and Timeline assembly for the simulator.
#include "sim/engine/recorder.h"

#include <algorithm>
#include <numeric>

namespace meshscope::engine {
namespace {

using schedule::ActionKind;

traces::Phase phase_of(ActionKind k) {
  switch (k) {
    case ActionKind::kForward:
    case ActionKind::kSendForward:
    case ActionKind::kRecvForward: return traces::Phase::kForward;
    case ActionKind::kBackward:
    case ActionKind::kSendBackward:
    case ActionKind::kRecvBackward: return traces::Phase::kBackward;
    case ActionKind::kInputGrad: return traces::Phase::kInputGrad;
    case ActionKind::kWeightGrad: return traces::Phase::kWeightGrad;
    case ActionKind::kOptimizerStep: return traces::Phase::kOptimizer;
    default: return traces::Phase::kNone;
  }
}

traces::SpanKind span_kind(ActionKind k) {
  if (schedule::is_send(k)) return traces::SpanKind::kSend;
  if (schedule::is_recv(k)) return traces::SpanKind::kRecv;
  if (schedule::is_collective(k)) return traces::SpanKind::kCollective;
  return traces::SpanKind::kCompute;
}

}  // namespace

Recorder::Recorder(const EngineInput& input, const Program& program, bool enabled)
    : input_(input), program_(program), enabled_(enabled) {
  if (!enabled_) return;
  const schedule::Schedule& s = *input.schedule;
  name_width_ = std::max(s.num_microbatches + 1, 5);
  name_cache_.assign(static_cast<size_t>(ActionKind::kCount) * s.num_stages * name_width_, 0);
  spans_.reserve(program.ops.size() + program.ops.size() / 2);
  samples_.resize(program.num_ranks);
}

uint32_t Recorder::name_of(int rank, uint32_t op) {
  const schedule::Action& a = input_.schedule->ranks[rank][op - program_.rank_begin[rank]];
  const int col = schedule::is_collective(a.kind) ? static_cast<int>(a.group) : a.microbatch + 1;
  const size_t key = (static_cast<size_t>(a.kind) * input_.schedule->num_stages + a.stage) * name_width_ +
                     std::clamp(col, 0, name_width_ - 1);
  uint32_t& id = name_cache_[key];
  if (id == 0) {
    schedule::Action canon = a;
    canon.peer = -1;
    canon.bytes = 0;
    id = strings_.intern(schedule::to_string(canon));
  }
  return id;
}

uint32_t Recorder::span(int rank, SimLane lane, uint32_t op, int64_t begin_ns, int64_t end_ns) {
  const schedule::Action& a = input_.schedule->ranks[rank][op - program_.rank_begin[rank]];
  traces::Span s;
  s.begin_ns = begin_ns;
  s.end_ns = end_ns;
  s.device = static_cast<uint16_t>(rank);
  s.lane = static_cast<uint16_t>(lane);
  s.stage = static_cast<int16_t>(a.stage);
  s.microbatch = a.microbatch;
  s.kind = span_kind(a.kind);
  s.phase = phase_of(a.kind);
  s.name = name_of(rank, op);
  const Op& o = program_.ops[op];
  if (schedule::is_p2p(a.kind)) {
    s.bytes = o.value;
  } else if (schedule::is_collective(a.kind)) {
    s.bytes = a.bytes;
  } else {
    const StageTiming& t = input_.stages[a.stage];
    s.flops = a.kind == ActionKind::kForward     ? t.forward_flops
              : a.kind == ActionKind::kBackward  ? t.input_grad_flops + t.weight_grad_flops
              : a.kind == ActionKind::kInputGrad ? t.input_grad_flops
              : a.kind == ActionKind::kWeightGrad ? t.weight_grad_flops
                                                  : 0.0;
  }
  spans_.push_back(s);
  return static_cast<uint32_t>(spans_.size() - 1);
}

void Recorder::activation(int rank, int64_t t_ns, int64_t bytes) {
  samples_[rank].push_back({t_ns, static_cast<double>(bytes)});
}

traces::Timeline Recorder::finish(int64_t step_end_ns) {
  traces::Timeline tl;
  const schedule::Schedule& s = *input_.schedule;
  const mesh::Mesh mesh(s.mesh);
  const int ranks = program_.num_ranks;
  tl.devices.reserve(ranks);
  for (int r = 0; r < ranks; ++r) {
    const uint16_t d = tl.add_device(r, "rank " + std::to_string(r) + " \u00b7 " + mesh.describe(r),
                                     mesh.coord_of(r));
    tl.add_lane(d, "compute", traces::LaneKind::kCompute);
    tl.add_lane(d, "send", traces::LaneKind::kComm);
    tl.add_lane(d, "recv", traces::LaneKind::kComm);
    tl.add_lane(d, "collective", traces::LaneKind::kComm);
  }
  // Counting sort by device, then (lane, begin) inside each device.
  const size_t n = spans_.size();
  std::vector<uint32_t> start(ranks + 1, 0);
  for (const traces::Span& sp : spans_) ++start[sp.device + 1];
  for (int r = 0; r < ranks; ++r) start[r + 1] += start[r];
  std::vector<uint32_t> order(n), fill(start.begin(), start.end() - 1);
  for (uint32_t i = 0; i < n; ++i) order[fill[spans_[i].device]++] = i;
  auto by_lane_begin = [&](uint32_t a, uint32_t b) {
    const traces::Span& x = spans_[a];
    const traces::Span& y = spans_[b];
    if (x.lane != y.lane) return x.lane < y.lane;
    if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
    return a < b;
  };
  std::vector<int64_t> lane_end;
  for (int r = 0; r < ranks; ++r) {
    auto first = order.begin() + start[r], last = order.begin() + start[r + 1];
    std::sort(first, last, by_lane_begin);
    // Receives from two peers can overlap: give each overlapping one the first free recv lane.
    lane_end.clear();
    bool moved = false;
    for (auto it = first; it != last; ++it) {
      traces::Span& sp = spans_[*it];
      if (sp.lane != static_cast<uint16_t>(SimLane::kRecv)) continue;
      size_t k = 0;
      while (k < lane_end.size() && lane_end[k] > sp.begin_ns) ++k;
      if (k == lane_end.size()) lane_end.push_back(sp.end_ns);
      lane_end[k] = sp.end_ns;
      if (k > 0) {
        while (tl.devices[r].lanes.size() < 4 + k)
          tl.add_lane(static_cast<uint16_t>(r), "recv " + std::to_string(tl.devices[r].lanes.size() - 2),
                      traces::LaneKind::kComm);
        sp.lane = static_cast<uint16_t>(3 + k);
        moved = true;
      }
    }
    if (moved) std::sort(first, last, by_lane_begin);
  }
  std::vector<uint32_t> new_index(n);
  tl.spans.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    new_index[order[i]] = i;
    tl.spans.push_back(spans_[order[i]]);
  }
  std::vector<traces::Span>().swap(spans_);
  tl.flows.reserve(flows_.size());
  for (const traces::Flow& f : flows_) tl.flows.push_back({new_index[f.from], new_index[f.to]});
  tl.strings = std::move(strings_);
  for (int r = 0; r < ranks; ++r) {
    if (samples_[r].empty()) continue;
    traces::Counter c;
    c.device = static_cast<uint16_t>(r);
    c.name = std::string(traces::kActivationBytesCounter);
    c.samples.reserve(samples_[r].size() + 1);
    c.samples.push_back({0, 0.0});
    c.samples.insert(c.samples.end(), samples_[r].begin(), samples_[r].end());
    tl.counters.push_back(std::move(c));
  }
  tl.steps.push_back({0, step_end_ns});
  tl.metadata["source"] = input_.source;
  tl.metadata["schedule"] = s.name;
  tl.metadata["mesh"] = mesh::to_string(s.mesh);
  tl.metadata["microbatches"] = std::to_string(s.num_microbatches);
  tl.metadata["stages"] = std::to_string(s.num_stages);
  return tl;
}

}  // namespace meshscope::engine
