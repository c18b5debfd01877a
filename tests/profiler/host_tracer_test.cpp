// The Timeline a cpu run produces: devices named by mesh position with compute and comm lanes,
// one span per action with its phase, stage, microbatch and bytes, flows from each send to its
// recv, recv spans that start when the data was ready, the activation-memory counter and steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "exec_test_util.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/runtime/clock.h"
#include "sim/model/workload_cost.h"
#include "sim/schedule/schedule_text.h"
#include "traces/analysis_critical_path.h"
#include "traces/analysis_stragglers.h"

namespace meshscope::capture {
namespace {

using schedule::Family;
using traces::SpanKind;

model::WorkloadSpec mlp() {
  model::WorkloadSpec s;
  s.layers = 4;
  s.hidden = 16;
  s.batch = 16;
  return s;
}

const traces::Span* find_span(const traces::Timeline& t, int device, std::string_view name) {
  for (const auto& s : t.spans) {
    if (s.device == device && t.span_name(s) == name) return &s;
  }
  return nullptr;
}

double peak(const traces::Timeline& t, int device) {
  double p = 0;
  for (const auto& c : t.counters) {
    if (c.device != device || c.name != traces::kActivationBytesCounter) continue;
    for (const auto& s : c.samples) p = std::max(p, s.value);
  }
  return p;
}

// A schedule whose tracer calls a test makes by hand, with the programs it describes.
struct HandDrivenRun {
  explicit HandDrivenRun(std::string_view text)
      : schedule(schedule::load(text)),
        mesh(schedule.mesh),
        programs(schedule.ranks.size()),
        inner(schedule.ranks.size()) {}
  RunInfo info() const {
    RunInfo i;
    i.mesh = &mesh;
    i.schedule = &schedule;
    i.steps = 1;
    i.programs = &programs;
    i.inner = &inner;
    return i;
  }
  schedule::Schedule schedule;
  mesh::Mesh mesh;
  std::vector<std::vector<ActionInfo>> programs;
  std::vector<std::vector<InnerInfo>> inner;
};

TEST(HostTracer, PipelineRunTimelineHasDevicesSpansFlowsAndSteps) {
  const int steps = 2, m = 4;
  const auto s = exec::testing::make_schedule(Family::kOneFOneB, {1, 2, 2}, m);
  const exec::RunResult r = exec::testing::run_cpu(s, mlp(), steps);
  const traces::Timeline& t = r.timeline;
  ASSERT_EQ(t.devices.size(), 4u);
  EXPECT_EQ(t.devices[2].name, "rank 2 \u00b7 dp0 pp1 tp0");
  EXPECT_EQ(t.devices[2].coord, (traces::MeshCoord{0, 1, 0}));
  ASSERT_EQ(t.devices[0].lanes.size(), 2u);
  EXPECT_EQ(t.devices[0].lanes[0].kind, traces::LaneKind::kCompute);
  EXPECT_EQ(t.devices[0].lanes[1].kind, traces::LaneKind::kComm);
  EXPECT_EQ(t.metadata.at("schedule"), "1f1b");
  EXPECT_EQ(t.metadata.at("source"), "cpu");
  EXPECT_EQ(t.metadata.at("mesh"), "dp=1 pp=2 tp=2");

  // One span per action and step, plus the tp all-reduces inside F and B.
  size_t actions = 0;
  for (const auto& prog : s.ranks) actions += prog.size();
  size_t action_spans = 0, inner = 0;
  for (const auto& sp : t.spans) {
    if (t.span_name(sp).rfind("tp all-reduce", 0) == 0) {
      ++inner;
      EXPECT_EQ(sp.kind, SpanKind::kCollective);
      EXPECT_EQ(sp.lane, 1);
    } else {
      ++action_spans;
    }
  }
  EXPECT_EQ(action_spans, actions * steps);
  EXPECT_GT(inner, 0u);

  const traces::Span* f = find_span(t, 2, "F s1 mb3");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, SpanKind::kCompute);
  EXPECT_EQ(f->phase, traces::Phase::kForward);
  EXPECT_EQ(f->stage, 1);
  EXPECT_EQ(f->microbatch, 3);
  EXPECT_GT(f->flops, 0);

  // Every recv has exactly one flow from its send, between matching microbatches and stages.
  const auto costs =
      model::stage_costs(model::make_workload(mlp()), model::partition_units(4, 2), 2, 16 / m);
  std::map<uint32_t, int> flows_into;
  for (const auto& fl : t.flows) {
    const auto& from = t.spans[fl.from];
    const auto& to = t.spans[fl.to];
    ++flows_into[fl.to];
    EXPECT_EQ(from.kind, SpanKind::kSend);
    EXPECT_EQ(to.kind, SpanKind::kRecv);
    EXPECT_EQ(from.microbatch, to.microbatch);
    EXPECT_EQ(from.bytes, to.bytes);
    EXPECT_EQ(from.phase, to.phase);
    // The data is ready once the send copied it: a recv span never starts before its send.
    EXPECT_GE(to.begin_ns, from.begin_ns);
    if (from.phase == traces::Phase::kForward) {
      EXPECT_EQ(from.bytes, costs[0].output_bytes);
    }
  }
  size_t recvs = 0;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    if (t.spans[i].kind == SpanKind::kRecv) {
      ++recvs;
      EXPECT_EQ(flows_into[i], 1) << t.span_name(t.spans[i]);
    }
  }
  EXPECT_EQ(recvs, 2u * m * 2 * steps);  // tp 2 ranks per stage, F and B directions

  // Steps: ordered, disjoint windows that hold every span.
  ASSERT_EQ(t.steps.size(), static_cast<size_t>(steps));
  EXPECT_LE(t.steps[0].end_ns, t.steps[1].begin_ns);
  for (const auto& sp : t.spans) {
    const bool inside =
        std::any_of(t.steps.begin(), t.steps.end(), [&](const traces::StepWindow& w) {
          return sp.begin_ns >= w.begin_ns && sp.end_ns <= w.end_ns;
        });
    EXPECT_TRUE(inside) << t.span_name(sp);
  }
}

TEST(HostTracer, ActivationCounterPeaksFollowTheSchedule) {
  // GPipe keeps every microbatch's activations; 1F1B at most pp - rank of them.
  const int m = 4;
  const auto w = model::make_workload(mlp());
  const auto costs = model::stage_costs(w, model::partition_units(4, 2), 1, 16 / m);
  const auto gpipe =
      exec::testing::run_cpu(exec::testing::make_schedule(Family::kGpipe, {1, 2, 1}, m), mlp(), 1);
  const auto ofob = exec::testing::run_cpu(
      exec::testing::make_schedule(Family::kOneFOneB, {1, 2, 1}, m), mlp(), 1);
  EXPECT_EQ(peak(gpipe.timeline, 0), m * costs[0].activation_bytes);
  EXPECT_EQ(peak(gpipe.timeline, 1), m * costs[1].activation_bytes);
  EXPECT_EQ(peak(ofob.timeline, 0), 2 * costs[0].activation_bytes);
  EXPECT_EQ(peak(ofob.timeline, 1), 1 * costs[1].activation_bytes);
}

TEST(HostTracer, RecvSpanStartsWhenTheDataWasReady) {
  HandDrivenRun run(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\nrank 0: 0F0 0SEND_F0\nrank 1: 1RECV_F0\n");
  const auto& s = run.schedule;
  auto& programs = run.programs;
  programs[0].push_back(
      {s.ranks[0][0], 0, "F s0 mb0", SpanKind::kCompute, traces::Phase::kForward});
  programs[0].push_back(
      {s.ranks[0][1], 1, "SEND_F s0 mb0", SpanKind::kSend, traces::Phase::kForward, 1, 5, 64});
  programs[1].push_back(
      {s.ranks[1][0], 0, "RECV_F s1 mb0", SpanKind::kRecv, traces::Phase::kForward, 0, 5, 64});
  HostClockTracer tracer;
  tracer.begin_run(run.info());
  tracer.step_begin(1, 0);
  tracer.action_begin(1, 0, programs[1][0]);  // the receiver starts waiting first
  tracer.step_begin(0, 0);
  tracer.action_begin(0, 0, programs[0][0]);
  tracer.action_end(0, 0, programs[0][0], {0, 100});
  tracer.action_begin(0, 0, programs[0][1]);
  tracer.action_end(0, 0, programs[0][1], {});
  const int64_t ready = runtime::host_now_ns();
  tracer.step_end(0, 0);
  tracer.action_end(1, 0, programs[1][0], {ready, -1});
  tracer.step_end(1, 0);
  const traces::Timeline t = tracer.finish();
  const traces::Span* recv = find_span(t, 1, "RECV_F s1 mb0");
  const traces::Span* send = find_span(t, 0, "SEND_F s0 mb0");
  ASSERT_NE(recv, nullptr);
  ASSERT_NE(send, nullptr);
  EXPECT_GE(recv->begin_ns, send->end_ns);  // the wait before `ready` is not part of the span
  // ... but it is recorded: the receiver reached its recv before the sender began to compute.
  const auto recv_index = static_cast<uint32_t>(recv - t.spans.data());
  const traces::Span* forward = find_span(t, 0, "F s0 mb0");
  ASSERT_NE(forward, nullptr);
  EXPECT_LE(t.reached_ns(recv_index), forward->begin_ns);
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.spans[t.flows[0].from].kind, SpanKind::kSend);
  EXPECT_EQ(t.spans[t.flows[0].to].kind, SpanKind::kRecv);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_LE(t.steps[0].begin_ns, recv->begin_ns);
}

TEST(HostTracer, StragglersOfAMeshRunMatchEachCollectiveWithinItsGroup) {
  // dp 2 x tp 2: the tp all-reduces of the two replicas share their names, and the dp
  // all-reduces of the two tp ranks theirs; each is a collective of its own group. A member's
  // span starts once every member has arrived (the wait is idle), and the time it arrived is
  // recorded beside it, so no member of an instance arrives after another member's span ended.
  const auto s = exec::testing::make_schedule(Family::kOneFOneB, {2, 1, 2}, 2);
  const exec::RunResult r = exec::testing::run_cpu(s, mlp(), 1);
  const traces::Timeline& t = r.timeline;
  const traces::StragglerAnalysis a = traces::stragglers(t);
  ASSERT_FALSE(a.instances.empty());
  size_t tp = 0, dp = 0;
  for (const traces::CollectiveInstance& c : a.instances) {
    SCOPED_TRACE(c.name + " #" + std::to_string(c.occurrence));
    ASSERT_EQ(c.spans.size(), 2u);
    const traces::MeshCoord x = t.devices[t.spans[c.spans[0]].device].coord;
    const traces::MeshCoord y = t.devices[t.spans[c.spans[1]].device].coord;
    if (c.name.rfind("tp all-reduce", 0) == 0) {
      ++tp;
      EXPECT_EQ(x.dp, y.dp);
      EXPECT_NE(x.tp, y.tp);
    } else {
      ++dp;
      EXPECT_EQ(x.tp, y.tp);
      EXPECT_NE(x.dp, y.dp);
    }
    for (uint32_t i : c.spans) EXPECT_LE(c.last_arrival_ns, t.spans[i].end_ns);
  }
  EXPECT_GT(tp, 0u);
  EXPECT_GT(dp, 0u);
  // The critical path through those collectives charges each nanosecond of its length once.
  const auto paths = traces::critical_paths(t);
  ASSERT_FALSE(paths.empty());
  for (const traces::CriticalPath& p : paths) {
    int64_t kinds = 0, ranks = 0, charged = 0;
    for (const int64_t ns : p.by_kind) kinds += ns;
    for (const auto& [rank, ns] : p.by_rank) ranks += ns;
    for (const traces::PathStep& s : p.steps) charged += s.charged_ns + s.wait_ns;
    EXPECT_EQ(kinds, p.length_ns());
    EXPECT_EQ(ranks, p.length_ns());
    EXPECT_EQ(charged, p.length_ns());
  }
}

TEST(HostTracer, SendSpanEndsWhenThePayloadWasHandedOver) {
  // On a host with more rank threads than cores, waking the receiver can preempt the sender for
  // milliseconds; that is not transfer time, so the span ends at the send's done_ns.
  HandDrivenRun run("mesh dp=1 pp=2 tp=1\nmicrobatches 1\nrank 0: 0SEND_F0\nrank 1: 1RECV_F0\n");
  auto& programs = run.programs;
  programs[0].push_back({run.schedule.ranks[0][0], 0, "SEND_F s0 mb0", SpanKind::kSend,
                         traces::Phase::kForward, 1, 5, 64});
  HostClockTracer tracer;
  tracer.begin_run(run.info());
  tracer.step_begin(0, 0);
  const int64_t before = runtime::host_now_ns();
  tracer.action_begin(0, 0, programs[0][0]);
  ActionEnd end;
  end.done_ns = runtime::host_now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // descheduled after the hand-over
  tracer.action_end(0, 0, programs[0][0], end);
  tracer.step_end(0, 0);
  const traces::Timeline t = tracer.finish();
  const traces::Span* send = find_span(t, 0, "SEND_F s0 mb0");
  ASSERT_NE(send, nullptr);
  EXPECT_LE(send->end_ns - send->begin_ns, end.done_ns - before);
  EXPECT_GE(send->end_ns, send->begin_ns);
}

}  // namespace
}  // namespace meshscope::capture
