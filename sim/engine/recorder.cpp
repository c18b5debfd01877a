// Timeline assembly for the simulator.
#include "sim/engine/recorder.h"

#include "sim/schedule/action_span.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/schedule/action_collective.h"
#include "sim/schedule/schedule_descriptor.h"

namespace meshscope::engine {
namespace {

using schedule::ActionKind;

SimLane lane_of(ActionKind k) {
  if (schedule::is_send(k)) return SimLane::kSend;
  if (schedule::is_recv(k)) return SimLane::kRecv;
  if (schedule::is_collective(k)) return SimLane::kCollective;
  return SimLane::kCompute;
}

// Interned span names, one per (kind, stage, microbatch or group).
class Names {
 public:
  Names(const schedule::Schedule& s, traces::StringTable& strings)
      : s_(s),
        strings_(strings),
        width_(std::max(s.num_microbatches + 1, 5)),
        cache_(static_cast<size_t>(ActionKind::kCount) * s.num_stages * width_, 0) {}

  uint32_t of(const schedule::Action& a) {
    const int col = schedule::is_collective(a.kind) ? static_cast<int>(a.group) : a.microbatch + 1;
    const size_t key = (static_cast<size_t>(a.kind) * s_.num_stages + a.stage) * width_ +
                       std::clamp(col, 0, width_ - 1);
    uint32_t& id = cache_[key];
    if (id == 0) {
      // As the executor labels its spans (one rule: sim/schedule/action_span.h).
      const std::string n = schedule::span_label(a);
      id = strings_.intern(n);
    }
    return id;
  }

 private:
  const schedule::Schedule& s_;
  traces::StringTable& strings_;
  int width_;
  std::vector<uint32_t> cache_;
};

}  // namespace

Recorder::Recorder(const EngineInput& input, const Program& program, bool enabled)
    : input_(input), program_(program), enabled_(enabled) {
  if (enabled_) times_.assign(2 * program.num_ops(), 0);
}

int64_t Recorder::busy_ns(int rank) const {
  // One buffer for every rank's call (the engine asks for each rank in turn, on one thread).
  thread_local std::vector<std::pair<int64_t, int64_t>> spans;
  spans.clear();
  for (uint32_t g = program_.rank_begin[rank]; g < program_.rank_begin[rank + 1]; ++g)
    if (times_[2 * g + 1] > times_[2 * g]) spans.emplace_back(times_[2 * g], times_[2 * g + 1]);
  // In program order the ops mostly start in time order already.
  if (!std::is_sorted(spans.begin(), spans.end())) std::sort(spans.begin(), spans.end());
  int64_t busy = 0, end = INT64_MIN;
  for (const auto& [b, e] : spans) {
    if (e <= end) continue;
    busy += e - std::max(b, end);
    end = e;
  }
  return busy;
}

traces::Timeline Recorder::finish(int64_t step_end_ns) {
  traces::Timeline tl;
  const schedule::Schedule& s = *input_.schedule;
  const mesh::Mesh mesh(s.mesh);
  const int ranks = program_.num_ranks;
  Names names(s, tl.strings);
  std::vector<uint32_t> span_of(program_.num_ops(), 0);
  tl.devices.reserve(ranks);
  tl.spans.reserve(program_.num_ops());
  std::vector<uint32_t> lane_ops[static_cast<size_t>(SimLane::kCount)];
  std::vector<uint16_t> recv_lane;
  std::vector<int64_t> lane_end;
  for (int r = 0; r < ranks; ++r) {
    const uint16_t d = tl.add_device(r, "rank " + std::to_string(r) + " \u00b7 " + mesh.describe(r),
                                     mesh.coord_of(r));
    tl.add_lane(d, "compute", traces::LaneKind::kCompute);
    tl.add_lane(d, "send", traces::LaneKind::kComm);
    tl.add_lane(d, "recv", traces::LaneKind::kComm);
    tl.add_lane(d, "collective", traces::LaneKind::kComm);
    for (auto& v : lane_ops) v.clear();
    const uint32_t begin = program_.rank_begin[r], end = program_.rank_begin[r + 1];
    for (uint32_t g = begin; g < end; ++g)
      lane_ops[static_cast<int>(lane_of(program_.op(r, g).kind))].push_back(g);
    // Compute, send and collective streams run in program order; receives complete in arrival
    // order, so sort them and give each one that overlaps an earlier one another lane.
    auto& recvs = lane_ops[static_cast<int>(SimLane::kRecv)];
    std::stable_sort(recvs.begin(), recvs.end(),
                     [&](uint32_t a, uint32_t b) { return times_[2 * a] < times_[2 * b]; });
    recv_lane.assign(recvs.size(), 0);
    lane_end.clear();
    for (size_t i = 0; i < recvs.size(); ++i) {
      size_t k = 0;
      while (k < lane_end.size() && lane_end[k] > times_[2 * recvs[i]]) ++k;
      if (k == lane_end.size()) lane_end.push_back(0);
      lane_end[k] = times_[2 * recvs[i] + 1];
      recv_lane[i] = static_cast<uint16_t>(k == 0 ? 2 : 3 + k);
    }
    for (size_t k = 1; k < lane_end.size(); ++k)
      tl.add_lane(d, "recv " + std::to_string(k + 1), traces::LaneKind::kComm);
    auto emit = [&](uint32_t g, uint16_t lane) {
      const schedule::Action& a = s.ranks[r][g - begin];
      const Op& op = program_.op(r, g);
      traces::Span sp;
      sp.begin_ns = times_[2 * g];
      sp.end_ns = times_[2 * g + 1];
      sp.device = d;
      sp.lane = lane;
      sp.stage = static_cast<int16_t>(a.stage);
      sp.microbatch = a.microbatch;
      sp.kind = schedule::span_kind_of(a.kind);
      sp.phase = schedule::phase_of(a.kind);
      sp.name = names.of(a);
      if (schedule::is_p2p(a.kind)) {
        sp.bytes = op.value;
      } else if (schedule::is_collective(a.kind)) {
        sp.bytes = a.bytes;
      } else {
        const StageTiming& t = input_.stages[a.stage];
        sp.flops = a.kind == ActionKind::kForward      ? t.forward_flops
                   : a.kind == ActionKind::kBackward   ? t.input_grad_flops + t.weight_grad_flops
                   : a.kind == ActionKind::kInputGrad  ? t.input_grad_flops
                   : a.kind == ActionKind::kWeightGrad ? t.weight_grad_flops
                                                       : 0.0;
      }
      span_of[g] = static_cast<uint32_t>(tl.spans.size());
      tl.spans.push_back(sp);
      if (const auto c = schedule::collective_of(a, sp.bytes)) tl.set_collective(span_of[g], *c);
    };
    for (uint32_t g : lane_ops[0]) emit(g, 0);
    for (uint32_t g : lane_ops[1]) emit(g, 1);
    for (size_t i = 0; i < recvs.size(); ++i)
      if (recv_lane[i] == 2) emit(recvs[i], 2);
    for (uint32_t g : lane_ops[3]) emit(g, 3);
    for (auto lane = static_cast<uint16_t>(SimLane::kCount); lane < tl.devices[d].lanes.size();
         ++lane)
      for (size_t i = 0; i < recvs.size(); ++i)
        if (recv_lane[i] == lane) emit(recvs[i], lane);
    // Activation memory: +A at each forward's end, released by B (or by I and W). Stages whose
    // activations are not known (0 bytes: a replay of measured times) get no counter, so that
    // analyze says "-" rather than a peak of 0 B.
    traces::Counter c;
    int64_t held = 0;
    bool known = false;
    for (uint32_t g : lane_ops[0]) {
      const Op& op = program_.op(r, g);
      const std::optional<int64_t> delta = activation_delta(input_.stages[op.stage], op.kind);
      if (!delta) continue;
      if (c.samples.empty()) c.samples.push_back({0, 0.0});
      held += *delta;
      known = known || *delta != 0;
      c.samples.push_back({times_[2 * g + 1], static_cast<double>(held)});
    }
    if (known) {
      c.device = d;
      c.name = std::string(traces::kActivationBytesCounter);
      tl.counters.push_back(std::move(c));
    }
  }
  tl.flows.reserve(program_.sends.size());
  for (const Send& send : program_.sends)
    tl.flows.push_back({span_of[send.op], span_of[send.recv]});
  decltype(times_)().swap(times_);
  tl.steps.push_back({0, step_end_ns});
  tl.run.source = traces::parse_run_source(input_.source).value_or(traces::RunSource::kSim);
  schedule::describe_schedule(s, tl.run);
  tl.metadata["source"] = input_.source;
  tl.metadata["schedule"] = s.name;
  tl.metadata["mesh"] = mesh::to_string(s.mesh);
  tl.metadata["microbatches"] = std::to_string(s.num_microbatches);
  tl.metadata["stages"] = std::to_string(s.num_stages);
  return tl;
}

}  // namespace meshscope::engine
