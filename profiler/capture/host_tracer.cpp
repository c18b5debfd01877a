// Host-clock capture and the Timeline it builds (devices, lanes, spans, flows, counters, steps).
#include "profiler/capture/host_tracer.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "profiler/runtime/clock.h"
#include "sim/schedule/action_collective.h"

namespace meshscope::capture {
namespace {

constexpr uint16_t kComputeLane = 0;
constexpr uint16_t kCommLane = 1;

bool waits_for_data(schedule::ActionKind k) {
  return schedule::is_recv(k) || schedule::is_collective(k);
}

}  // namespace

void HostClockTracer::begin_run(const RunInfo& run) {
  if (run.mesh == nullptr || run.schedule == nullptr || run.programs == nullptr ||
      run.inner == nullptr) {
    throw std::invalid_argument("HostClockTracer: RunInfo lacks the mesh, schedule or programs");
  }
  run_ = run;
  const int world = run.mesh->size();
  ranks_ = std::vector<RankLog>(world);
  for (int r = 0; r < world; ++r) {
    const size_t per_step = (*run.programs)[r].size();
    ranks_[r].records.reserve(per_step * std::max(run.steps, 1));
    // Each tp collective runs once per microbatch (in its F, or in its B / I) and step.
    ranks_[r].inner.reserve((*run.inner)[r].size() *
                            static_cast<size_t>(std::max(run.schedule->num_microbatches, 1)) *
                            std::max(run.steps, 1));
    ranks_[r].steps.assign(std::max(run.steps, 1), StepMark{});
  }
  origin_ns_ = runtime::host_now_ns();
}

void HostClockTracer::step_begin(int rank, int step) {
  ranks_[rank].steps[step].begin_ns = runtime::host_now_ns();
}

void HostClockTracer::action_begin(int rank, int step, const ActionInfo& action) {
  Record& r = ranks_[rank].open;
  r.step = step;
  r.index = action.index;
  r.begin_ns = runtime::host_now_ns();
}

void HostClockTracer::inner_begin(int rank, int step, const InnerInfo& inner) {
  RankLog& log = ranks_[rank];
  log.open_inner.info = &inner;
  log.open_inner.step = step;
  log.open_inner.parent = log.open.index;
  log.open_inner.begin_ns = runtime::host_now_ns();
}

void HostClockTracer::inner_end(int rank, int, const InnerInfo&, int64_t ready_ns) {
  RankLog& log = ranks_[rank];
  log.open_inner.end_ns = runtime::host_now_ns();
  log.open_inner.ready_ns = ready_ns;
  log.inner.push_back(log.open_inner);
}

void HostClockTracer::action_end(int rank, int, const ActionInfo&, const ActionEnd& end) {
  RankLog& log = ranks_[rank];
  log.open.end_ns = runtime::host_now_ns();
  log.open.ready_ns = end.ready_ns;
  log.open.done_ns = end.done_ns;
  log.open.called_ns = end.called_ns;
  log.open.activation_bytes = end.activation_bytes;
  log.records.push_back(log.open);
}

void HostClockTracer::step_end(int rank, int step) {
  ranks_[rank].steps[step].end_ns = runtime::host_now_ns();
}

void HostClockTracer::build_spans(traces::Timeline& tl) const {
  // Sends by (step, src, dst, tag), in order, so each recv links to its send.
  std::map<std::tuple<int, int, int, int64_t>, std::vector<uint32_t>> sends;
  struct PendingRecv {
    std::tuple<int, int, int, int64_t> key;
    uint32_t span;
  };
  std::vector<PendingRecv> recvs;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const auto& program = (*run_.programs)[r];
    std::vector<uint32_t> names(program.size());
    for (size_t i = 0; i < program.size(); ++i) names[i] = tl.strings.intern(program[i].label);
    traces::Counter counter{
        static_cast<uint16_t>(r), std::string(traces::kActivationBytesCounter), {}};
    if (!ranks_[r].records.empty())
      counter.samples.push_back({ranks_[r].records.front().begin_ns - origin_ns_, 0});
    for (const Record& rec : ranks_[r].records) {
      const ActionInfo& a = program[rec.index];
      traces::Span s;
      s.begin_ns = rec.begin_ns - origin_ns_;
      if (waits_for_data(a.action.kind) && rec.ready_ns > rec.begin_ns) {
        s.begin_ns = std::min(rec.ready_ns, rec.end_ns) - origin_ns_;
      }
      s.end_ns = rec.end_ns - origin_ns_;
      // A send is over once its payload was handed over; the time spent after (descheduled by
      // the receiver it woke, on an oversubscribed host) is not transfer time.
      if (schedule::is_send(a.action.kind) && rec.done_ns > 0) {
        s.end_ns = std::clamp(rec.done_ns, rec.begin_ns, rec.end_ns) - origin_ns_;
      }
      s.bytes = a.bytes;
      s.flops = a.flops;
      s.name = names[rec.index];
      s.microbatch = a.action.microbatch;
      s.device = static_cast<uint16_t>(r);
      s.lane = a.span_kind == traces::SpanKind::kCompute ? kComputeLane : kCommLane;
      s.stage = static_cast<int16_t>(a.action.stage);
      s.kind = a.span_kind;
      s.phase = a.phase;
      const uint32_t id = tl.add_span(s);
      if (const auto c = schedule::collective_of(a.action, a.bytes)) tl.set_collective(id, *c);
      // The wait left out above, from the moment the rank made its call.
      tl.set_wait(id, s.begin_ns - (std::max(rec.begin_ns, rec.called_ns) - origin_ns_));
      if (schedule::is_send(a.action.kind)) {
        sends[{rec.step, static_cast<int>(r), a.peer, a.tag}].push_back(id);
      } else if (schedule::is_recv(a.action.kind)) {
        recvs.push_back({{rec.step, a.peer, static_cast<int>(r), a.tag}, id});
      }
      if (rec.activation_bytes >= 0) {
        counter.samples.push_back({s.end_ns, static_cast<double>(rec.activation_bytes)});
      }
    }
    for (const InnerRecord& in : ranks_[r].inner) {
      const ActionInfo& parent = program[in.parent];
      traces::Span s;
      s.begin_ns = std::max(in.begin_ns, std::min(in.ready_ns, in.end_ns)) - origin_ns_;
      s.end_ns = in.end_ns - origin_ns_;
      s.bytes = in.info->bytes;
      s.name = tl.strings.intern(in.info->label);
      s.microbatch = parent.action.microbatch;
      s.device = static_cast<uint16_t>(r);
      s.lane = kCommLane;
      s.stage = static_cast<int16_t>(parent.action.stage);
      s.kind = in.info->span_kind;
      s.phase = parent.phase;
      const uint32_t id = tl.add_span(s);
      tl.set_wait(id, s.begin_ns - (in.begin_ns - origin_ns_));
      if (s.kind == traces::SpanKind::kCollective) {
        tl.set_collective(id, traces::Collective{.op = in.info->op,
                                                 .group = in.info->group,
                                                 .bytes = in.info->bytes,
                                                 .algorithm = traces::CollectiveAlgorithm::kAuto});
      }
    }
    tl.counters.push_back(std::move(counter));
  }
  for (const PendingRecv& pr : recvs) {
    auto it = sends.find(pr.key);
    if (it == sends.end() || it->second.empty()) continue;  // aborted run: the send never happened
    tl.add_flow(it->second.front(), pr.span);
    it->second.erase(it->second.begin());
  }
}

traces::Timeline HostClockTracer::finish() {
  traces::Timeline tl;
  const mesh::Mesh& m = *run_.mesh;
  for (int r = 0; r < m.size(); ++r) {
    const uint16_t d =
        tl.add_device(r, "rank " + std::to_string(r) + " \u00b7 " + m.describe(r), m.coord_of(r));
    tl.add_lane(d, "compute", traces::LaneKind::kCompute);
    tl.add_lane(d, "comm", traces::LaneKind::kComm);
  }
  build_spans(tl);
  for (int step = 0; step < run_.steps; ++step) {
    int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
    for (const RankLog& log : ranks_) {
      const StepMark& mark = log.steps[step];
      if (mark.begin_ns >= 0) begin = std::min(begin, mark.begin_ns);
      if (mark.end_ns >= 0) end = std::max(end, mark.end_ns);
    }
    if (begin <= end) tl.steps.push_back({begin - origin_ns_, end - origin_ns_});
  }
  tl.run = run_.run;
  tl.metadata = run_.metadata;
  tl.metadata["clock"] = "host monotonic";
  if (!run_.backend.empty()) tl.metadata["backend"] = run_.backend;
  tl.sort_spans();
  return tl;
}

}  // namespace meshscope::capture
