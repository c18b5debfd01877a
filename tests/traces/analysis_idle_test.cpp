#include <gtest/gtest.h>

#include "tests/traces/trace_fixtures.h"
#include "traces/analysis.h"

namespace meshscope::traces {
namespace {

using testing::add;
using testing::add_device;

std::vector<const Span*> idle_spans(const Timeline& t) {
  std::vector<const Span*> out;
  for (const Span& s : t.spans) {
    if (s.kind == SpanKind::kIdle) out.push_back(&s);
  }
  return out;
}

Timeline pipeline_like() {
  Timeline t;
  const uint16_t d0 = t.add_device(0, "rank 0");
  t.add_lane(d0, "comm", LaneKind::kComm);  // the compute lane is not lane 0
  t.add_lane(d0, "compute", LaneKind::kCompute);
  const uint16_t d1 = add_device(t, 1);
  t.steps = {{0, 100}, {200, 300}};
  add(t, d0, 1, SpanKind::kCompute, 10, 40);
  add(t, d0, 0, SpanKind::kSend, 30, 50);
  add(t, d0, 1, SpanKind::kCompute, 200, 300);
  const uint32_t recv = add(t, d1, 1, SpanKind::kRecv, 50, 60);
  add(t, d1, 0, SpanKind::kCompute, 60, 100);
  t.add_flow(1, recv);
  return t;
}

TEST(AddIdleSpans, GapsOfTheBusyUnionInEachStepOnTheComputeLane) {
  Timeline t = pipeline_like();
  EXPECT_EQ(add_idle_spans(t), 4u);
  const auto idle = idle_spans(t);
  ASSERT_EQ(idle.size(), 4u);
  // Device 0: [0,10) and [50,100) in step 1; step 2 fully busy.
  EXPECT_EQ(idle[0]->device, 0);
  EXPECT_EQ(idle[0]->lane, 1);  // its first compute lane
  EXPECT_EQ(idle[0]->begin_ns, 0);
  EXPECT_EQ(idle[0]->end_ns, 10);
  EXPECT_EQ(idle[1]->begin_ns, 50);
  EXPECT_EQ(idle[1]->end_ns, 100);
  EXPECT_EQ(t.span_name(*idle[1]), "idle");  // one name, which trace viewers sum by
  // Device 1: [0,50) in step 1; step 2 is empty and charged whole, as a second span.
  EXPECT_EQ(idle[2]->device, 1);
  EXPECT_EQ(idle[2]->lane, 0);
  EXPECT_EQ(idle[2]->begin_ns, 0);
  EXPECT_EQ(idle[2]->end_ns, 50);
  EXPECT_EQ(idle[3]->device, 1);
  EXPECT_EQ(idle[3]->begin_ns, 200);
  EXPECT_EQ(idle[3]->end_ns, 300);
  EXPECT_EQ(t.span_name(*idle[3]), "idle");
}

TEST(AddIdleSpans, IdleTimeEqualsAnalysisIdle) {
  Timeline t = testing::gpipe(4, 6, 700, 1300);
  add_idle_spans(t);
  const TimelineAnalysis a = analyze(t);
  std::vector<int64_t> idle(t.devices.size(), 0);
  for (const Span* s : idle_spans(t)) idle[s->device] += s->duration_ns();
  for (const DeviceAnalysis& d : a.devices) EXPECT_EQ(idle[d.device], d.idle_ns);
}

TEST(AddIdleSpans, IdempotentAndNeverCountedAsBusy) {
  Timeline t = pipeline_like();
  const TimelineAnalysis before = analyze(t);
  add_idle_spans(t);
  const std::vector<Span> once = t.spans;
  const size_t flows = t.flows.size();
  add_idle_spans(t);
  ASSERT_EQ(t.spans.size(), once.size());
  for (size_t i = 0; i < once.size(); ++i) {
    EXPECT_EQ(t.spans[i].begin_ns, once[i].begin_ns);
    EXPECT_EQ(t.spans[i].end_ns, once[i].end_ns);
    EXPECT_EQ(t.spans[i].kind, once[i].kind);
  }
  EXPECT_EQ(t.flows.size(), flows);
  const TimelineAnalysis after = analyze(t);
  for (size_t d = 0; d < t.devices.size(); ++d) {
    EXPECT_EQ(after.devices[d].busy_ns, before.devices[d].busy_ns);
    EXPECT_EQ(after.devices[d].idle_ns, before.devices[d].idle_ns);
  }
}

TEST(RemoveIdleSpans, RemapsFlowsAndDropsThoseTouchingIdle) {
  Timeline t;
  const uint16_t d = add_device(t, 0);
  const uint32_t idle = add(t, d, 0, SpanKind::kIdle, 0, 5);
  const uint32_t send = add(t, d, 1, SpanKind::kSend, 5, 10, "send");
  const uint32_t recv = add(t, d, 1, SpanKind::kRecv, 10, 20, "recv");
  t.add_flow(send, recv);
  t.add_flow(idle, recv);
  EXPECT_EQ(remove_idle_spans(t), 1u);
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].from]), "send");
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].to]), "recv");
}

TEST(AddIdleSpans, SkipsHostOnlyDevices) {
  Timeline t;
  const uint16_t gpu = add_device(t, 0);
  const uint16_t cpu = t.add_device(0, "host");
  t.add_lane(cpu, "thread 1", LaneKind::kHost);
  add(t, gpu, 0, SpanKind::kCompute, 0, 10);
  add(t, gpu, 0, SpanKind::kCompute, 20, 30);
  add(t, cpu, 0, SpanKind::kHost, 0, 30);
  EXPECT_EQ(add_idle_spans(t), 1u);
  EXPECT_EQ(idle_spans(t).at(0)->device, gpu);
}

TEST(AddIdleSpans, DeviceWithoutLanesGetsAComputeLane) {
  Timeline t;
  const uint16_t busy = add_device(t, 0);
  const uint16_t bare = t.add_device(1, "rank 1");
  add(t, busy, 0, SpanKind::kCompute, 0, 10);
  add_idle_spans(t);
  ASSERT_EQ(t.devices[bare].lanes.size(), 1u);
  EXPECT_EQ(t.devices[bare].lanes[0].kind, LaneKind::kCompute);
  const auto idle = idle_spans(t);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0]->device, bare);
  EXPECT_EQ(idle[0]->duration_ns(), 10);
}

}  // namespace
}  // namespace meshscope::traces
