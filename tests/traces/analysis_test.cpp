#include "traces/analysis.h"

#include <gtest/gtest.h>

#include <limits>

#include "tests/traces/trace_fixtures.h"
#include "traces/analysis_critical_path.h"

namespace meshscope::traces {
namespace {

using testing::add;
using testing::add_device;

// Two devices, spans on two lanes, two steps; every number below is worked out by hand.
Timeline two_step_timeline() {
  Timeline t;
  const uint16_t d0 = add_device(t, 0);
  const uint16_t d1 = add_device(t, 1);
  t.steps = {{0, 100}, {100, 200}};
  // Device 0, step 1: compute [0,40) and [30,60) overlap; send [50,70) on the comm lane.
  add(t, d0, 0, SpanKind::kCompute, 0, 40);
  add(t, d0, 0, SpanKind::kCompute, 30, 60);
  add(t, d0, 1, SpanKind::kSend, 50, 70);
  // Device 0, step 2: a collective [90,130) that straddles the step boundary, compute [150,160).
  add(t, d0, 1, SpanKind::kCollective, 90, 130);
  add(t, d0, 0, SpanKind::kCompute, 150, 160);
  // Host work and annotations are not device activity; idle spans are derived, never input.
  add(t, d0, 0, SpanKind::kHost, 0, 200);
  add(t, d0, 0, SpanKind::kAnnotation, 0, 200);
  add(t, d0, 0, SpanKind::kIdle, 60, 90);
  // Device 1: a recv [60,80), compute [80,100); nothing in step 2 (finished early).
  add(t, d1, 1, SpanKind::kRecv, 60, 80);
  add(t, d1, 0, SpanKind::kCompute, 80, 100);
  // A memcpy is busy but neither compute nor communication.
  add(t, d1, 1, SpanKind::kMemcpy, 95, 105);
  return t;
}

// A cpu run's forward [0,100) of stage 0, microbatch 0 performs its tp all-reduce itself: the rank
// reaches it at 30, waits for its group until 60, and copies until 80. On the cpu backend that
// wait is idle and the copy communication, not compute; a GPU or imported trace, where a span is
// a kernel, is taken as it is.
Timeline forward_with_its_all_reduce(RunSource source) {
  Timeline t;
  t.run.source = source;
  const uint16_t d = add_device(t, 0);
  t.steps = {{0, 100}};
  add(t, d, 0, SpanKind::kCompute, 0, 100, "F0", Phase::kForward, 0, 0);
  const uint32_t ar =
      add(t, d, 1, SpanKind::kCollective, 60, 80, "tp all-reduce", Phase::kForward, 0, 0);
  t.set_wait(ar, 30);
  // Another microbatch's collective inside the same span is not its own: left as overlap.
  add(t, d, 1, SpanKind::kCollective, 90, 95, "tp all-reduce", Phase::kForward, 0, 1);
  return t;
}

TEST(Analyze, ACpuRunsComputeLeavesOutTheCollectivesItsActionsPerformThemselves) {
  const DeviceAnalysis cpu = analyze(forward_with_its_all_reduce(RunSource::kCpu)).devices.at(0);
  EXPECT_EQ(cpu.compute_ns, 30 + 20);       // [0,30) ∪ [80,100)
  EXPECT_EQ(cpu.communication_ns, 20 + 5);  // [60,80) ∪ [90,95)
  EXPECT_EQ(cpu.overlap_ns, 5);             // [90,95)
  EXPECT_EQ(cpu.idle_ns, 30);               // the wait [30,60)
  EXPECT_EQ(cpu.bubbles.peer_wait_ns, 30);  // between the stage's first and last compute
  ASSERT_EQ(cpu.stage_phases.size(), 1u);
  EXPECT_EQ(cpu.stage_phases[0].compute_ns, 50);
  Timeline shown = forward_with_its_all_reduce(RunSource::kCpu);  // the viewer's idle spans agree
  ASSERT_EQ(add_idle_spans(shown), 1u);
  EXPECT_EQ(shown.spans.back().begin_ns, 30);
  EXPECT_EQ(shown.spans.back().end_ns, 60);
  const DeviceAnalysis gpu = analyze(forward_with_its_all_reduce(RunSource::kCuda)).devices.at(0);
  EXPECT_EQ(gpu.compute_ns, 100);
  EXPECT_EQ(gpu.overlap_ns, 25);
  EXPECT_EQ(gpu.idle_ns, 0);
}

TEST(Analyze, TheHtaSectionAndTheCriticalPathAgreeWithTheTableOnACpuRunsNestedCollectives) {
  const Timeline cpu_run = forward_with_its_all_reduce(RunSource::kCpu);
  const HtaDeviceBreakdown cpu = analyze(cpu_run).hta.at(0);
  EXPECT_EQ(cpu.span_ns, 100);
  EXPECT_EQ(cpu.idle_ns, 30);  // the table's idle
  EXPECT_EQ(cpu.compute_ns, 50);
  EXPECT_EQ(cpu.communication_ns, 25);
  EXPECT_EQ(cpu.comm_compute_overlap_ns, 5);
  EXPECT_EQ(cpu.other_idle_ns, 30);  // waiting for the group
  EXPECT_EQ(cpu.host_wait_ns + cpu.kernel_wait_ns + cpu.other_idle_ns, cpu.idle_ns);
  const std::vector<CriticalPath> path = critical_paths(cpu_run);
  ASSERT_EQ(path.size(), 1u);
  const auto ns = [&](const CriticalPath& p, PathKind k) {
    return p.by_kind[static_cast<size_t>(k)];
  };
  EXPECT_EQ(ns(path[0], PathKind::kCompute), 50);
  EXPECT_EQ(ns(path[0], PathKind::kWait), 30);
  EXPECT_EQ(ns(path[0], PathKind::kCommunication), 20);  // its own transfer, [60,80)
  EXPECT_EQ(path[0].length_ns(), 100);
  // A GPU trace's kernel is taken as it is, by HTA's definitions and on the path.
  const Timeline gpu_run = forward_with_its_all_reduce(RunSource::kCuda);
  const HtaDeviceBreakdown gpu = analyze(gpu_run).hta.at(0);
  EXPECT_EQ(gpu.idle_ns, 0);
  EXPECT_EQ(gpu.compute_ns, 100);
  EXPECT_EQ(ns(critical_paths(gpu_run).at(0), PathKind::kCompute), 100);
}

TEST(Intervals, SubtractKeepsWhatNoIntervalOfTheSecondCovers) {
  EXPECT_EQ(subtract({{0, 100}}, {{30, 60}, {80, 120}}), (IntervalSet{{0, 30}, {60, 80}}));
  EXPECT_EQ(subtract({{0, 10}, {20, 30}, {40, 50}}, {{5, 25}, {45, 46}}),
            (IntervalSet{{0, 5}, {25, 30}, {40, 45}, {46, 50}}));
  EXPECT_EQ(subtract({{0, 10}}, {}), (IntervalSet{{0, 10}}));
  EXPECT_EQ(subtract({}, {{0, 10}}), IntervalSet{});
  EXPECT_EQ(subtract({{10, 20}}, {{0, 10}, {20, 30}}), (IntervalSet{{10, 20}}));
  EXPECT_EQ(subtract({{10, 20}}, {{0, 30}}), IntervalSet{});
}

TEST(Analyze, BusyComputeCommOverlapIdlePerDeviceExact) {
  const TimelineAnalysis a = analyze(two_step_timeline());
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.window_ns, 200);
  EXPECT_EQ(a.step_time_ns, 100);

  const DeviceAnalysis& d0 = a.devices[0];
  EXPECT_EQ(d0.window_ns, 200);
  EXPECT_EQ(d0.compute_ns, 60 + 10);        // [0,60) ∪ [150,160)
  EXPECT_EQ(d0.communication_ns, 20 + 40);  // [50,70) ∪ [90,130)
  EXPECT_EQ(d0.overlap_ns, 10);             // [50,60)
  EXPECT_EQ(d0.busy_ns, 70 + 40 + 10);      // [0,70) ∪ [90,130) ∪ [150,160)
  EXPECT_EQ(d0.idle_ns, 200 - 120);
  EXPECT_DOUBLE_EQ(d0.bubble_fraction, 80.0 / 200.0);

  const DeviceAnalysis& d1 = a.devices[1];
  EXPECT_EQ(d1.busy_ns, 45);  // [60,105)
  EXPECT_EQ(d1.compute_ns, 20);
  EXPECT_EQ(d1.communication_ns, 20);
  EXPECT_EQ(d1.overlap_ns, 0);
  EXPECT_EQ(d1.idle_ns, 155);  // the global window charges step 2, where device 1 does nothing

  EXPECT_EQ(a.idle_ns, 80 + 155);
  EXPECT_DOUBLE_EQ(a.bubble_fraction, (80.0 + 155.0) / 400.0);
  EXPECT_EQ(a.busy_ns, 120 + 45);
}

TEST(Analyze, SpansOutsideTheStepsDoNotCount) {
  Timeline t;
  const uint16_t d = add_device(t, 0);
  t.steps = {{100, 200}};
  add(t, d, 0, SpanKind::kCompute, 0, 150);    // half outside
  add(t, d, 0, SpanKind::kCompute, 250, 300);  // wholly outside
  const TimelineAnalysis a = analyze(t);
  EXPECT_EQ(a.devices[0].busy_ns, 50);
  EXPECT_EQ(a.devices[0].idle_ns, 50);
}

TEST(Analyze, WithoutStepsTheWindowIsTheDeviceActivityExtent) {
  Timeline t;
  const uint16_t d0 = add_device(t, 0);
  const uint16_t d1 = add_device(t, 1);
  add(t, d0, 0, SpanKind::kHost, -1000, 5000);  // host work outside must not widen the window
  add(t, d0, 0, SpanKind::kCompute, 10, 30);
  add(t, d1, 0, SpanKind::kCompute, 40, 110);
  const TimelineAnalysis a = analyze(t);
  ASSERT_EQ(a.windows.size(), 1u);
  EXPECT_EQ(a.windows[0], (Interval{10, 110}));
  EXPECT_EQ(a.devices[0].idle_ns, 80);
  EXPECT_EQ(a.devices[1].idle_ns, 30);
}

TEST(Analyze, OverlappingStepWindowsCountTimeOnce) {
  Timeline t;
  const uint16_t d = add_device(t, 0);
  t.steps = {{50, 150}, {0, 100}};  // out of order and overlapping
  add(t, d, 0, SpanKind::kCompute, 0, 150);
  const TimelineAnalysis a = analyze(t);
  EXPECT_EQ(a.windows, (std::vector<Interval>{{0, 100}, {100, 150}}));
  EXPECT_EQ(a.devices[0].busy_ns, 150);
  EXPECT_EQ(a.devices[0].idle_ns, 0);
}

TEST(Analyze, GpipeBubbleFractionMatchesClosedForm) {
  for (const auto& [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{3, 1}}) {
    const TimelineAnalysis a = analyze(testing::gpipe(p, m, 1000, 2000));
    const double expected = static_cast<double>(p - 1) / (m + p - 1);
    EXPECT_DOUBLE_EQ(a.bubble_fraction, expected) << "p=" << p << " m=" << m;
    for (const DeviceAnalysis& d : a.devices) EXPECT_DOUBLE_EQ(d.bubble_fraction, expected);
  }
}

TEST(Analyze, BubbleAttributionSplitsWarmupPeerWaitCooldown) {
  const int p = 4;
  const int64_t f = 1000;
  const int64_t b = 2000;
  const TimelineAnalysis a = analyze(testing::gpipe(p, 8, f, b));
  ASSERT_TRUE(a.has_stage_annotations);
  for (int s = 0; s < p; ++s) {
    const BubbleAttribution& bub = a.devices[s].bubbles;
    EXPECT_EQ(bub.warmup_ns, s * f) << "stage " << s;    // waits for s forwards upstream
    EXPECT_EQ(bub.cooldown_ns, s * b) << "stage " << s;  // its last backward ends s·b early
    EXPECT_EQ(bub.peer_wait_ns, (p - 1 - s) * (f + b)) << "stage " << s;
    EXPECT_EQ(bub.unattributed_ns, 0);
    EXPECT_EQ(bub.warmup_ns + bub.peer_wait_ns + bub.cooldown_ns, a.devices[s].idle_ns);
  }
}

TEST(Analyze, BubbleAttributionIsPerStepWindow) {
  // Two identical GPipe steps back to back: each window is split at its own first and last
  // stage-compute span, so every figure doubles.
  const int p = 3;
  const int64_t f = 100;
  const int64_t b = 300;
  Timeline t = testing::gpipe(p, 2, f, b);
  const int64_t step = t.steps[0].end_ns;
  const size_t n = t.spans.size();
  for (size_t i = 0; i < n; ++i) {
    Span s = t.spans[i];
    s.begin_ns += step;
    s.end_ns += step;
    t.add_span(s);
  }
  t.steps.push_back({step, 2 * step});
  const TimelineAnalysis a = analyze(t);
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(a.devices[s].bubbles.warmup_ns, 2 * s * f);
    EXPECT_EQ(a.devices[s].bubbles.cooldown_ns, 2 * s * b);
    EXPECT_EQ(a.devices[s].bubbles.peer_wait_ns, 2 * (p - 1 - s) * (f + b));
  }
}

TEST(Analyze, IdleWithoutStageAnnotationsIsUnattributed) {
  const TimelineAnalysis a = analyze(two_step_timeline());
  EXPECT_FALSE(a.has_stage_annotations);
  for (const DeviceAnalysis& d : a.devices) EXPECT_EQ(d.bubbles.unattributed_ns, d.idle_ns);
}

TEST(Analyze, HostOnlyDevicesHaveNoBubbles) {
  // An imported PyTorch trace: a GPU, and the CPU process that launched its kernels.
  Timeline t;
  const uint16_t gpu = add_device(t, 0);
  const uint16_t cpu = t.add_device(0, "host");
  t.add_lane(cpu, "thread 1", LaneKind::kHost);
  t.add_lane(cpu, "thread 2", LaneKind::kHost);
  add(t, gpu, 0, SpanKind::kCompute, 0, 60);
  add(t, cpu, 0, SpanKind::kHost, 0, 100);
  t.steps = {{0, 100}};
  const TimelineAnalysis a = analyze(t);
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].device, gpu);
  EXPECT_DOUBLE_EQ(a.bubble_fraction, 0.4);
  EXPECT_TRUE(is_host_only(t.devices[cpu]));
  EXPECT_FALSE(is_host_only(t.devices[gpu]));
  EXPECT_FALSE(is_host_only(Device{}));  // a mesh rank without lanes did nothing: all bubble
}

TEST(Analyze, PeakActivationBytesPerDevice) {
  Timeline t = two_step_timeline();
  t.counters.push_back({0, std::string(kActivationBytesCounter), {{0, 100}, {50, 4096}, {90, 10}}});
  t.counters.push_back({0, "other", {{0, 1e12}}});
  const TimelineAnalysis a = analyze(t);
  EXPECT_EQ(a.devices[0].peak_activation_bytes, 4096);
  EXPECT_FALSE(a.devices[1].peak_activation_bytes.has_value());
}

TEST(Analyze, SpanOnAMissingDeviceIsAnErrorNamingIt) {
  Timeline t;
  add_device(t, 0);
  add(t, 3, 0, SpanKind::kCompute, 0, 10);
  try {
    analyze(t);
    FAIL() << "expected an error";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("span 0"), std::string::npos) << e.what();
  }
}

TEST(FormatDuration, ThreeRoundedDecimalsInTheLargestUnitItReaches) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(999), "999 ns");
  EXPECT_EQ(format_duration(1000), "1.000 µs");
  EXPECT_EQ(format_duration(12345), "12.345 µs");
  EXPECT_EQ(format_duration(1234567), "1.235 ms");  // rounded (truncated: 1.234, since stop 61)
  EXPECT_EQ(format_duration(1234499), "1.234 ms");
  EXPECT_EQ(format_duration(3496900000), "3.497 s");  // as simulate's summary line rounds it
  EXPECT_EQ(format_duration(999999600), "1.000 s");   // not 1000.000 ms
  EXPECT_EQ(format_duration(999999), "999.999 µs");
  EXPECT_EQ(format_duration(2500000000), "2.500 s");
  EXPECT_EQ(format_duration(-1500), "-1.500 µs");
  EXPECT_EQ(format_duration(std::numeric_limits<int64_t>::min()), "-9223372036.855 s");
}

// Without step windows, one kernel with a time stamp far from the rest becomes the window's
// edge: the check names it, and only when few spans sit across a gap that is most of the window.
TEST(DetachedActivity, FewSpansAcrossAGapThatIsMostOfTheWindowAreNamed) {
  const auto timeline = [](int far, int64_t far_at) {
    Timeline t;
    const uint16_t d0 = add_device(t, 0);
    const uint16_t d1 = add_device(t, 1);
    for (int i = 0; i < 100; ++i) {
      add(t, i % 2 ? d1 : d0, 0, SpanKind::kCompute, 10'000 + 10 * i, 10'000 + 10 * i + 8);
    }
    for (int i = 0; i < far; ++i) add(t, d0, 1, SpanKind::kMemcpy, far_at + i, far_at + i + 1);
    add(t, d0, 0, SpanKind::kHost, 0, 100'000);  // host work is not device activity
    return t;
  };
  const auto early = detached_activity(timeline(1, 0));
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->spans, 1u);
  EXPECT_EQ(early->of_spans, 101u);
  EXPECT_TRUE(early->before);
  EXPECT_EQ(early->gap_ns, 10'000 - 1);
  EXPECT_EQ(early->window_ns, 10'998);  // [0, 10998): the last kernel ends at 10'000 + 998
  EXPECT_NE(describe(*early).find("1 of 101 device activities lie 9.999 µs before the rest"),
            std::string::npos)
      << describe(*early);

  const auto late = detached_activity(timeline(1, 1'000'000));
  ASSERT_TRUE(late.has_value());
  EXPECT_FALSE(late->before);

  EXPECT_FALSE(detached_activity(timeline(0, 0)).has_value());      // no gap
  EXPECT_FALSE(detached_activity(timeline(2, 0)).has_value());      // 2 of 102: over 1%
  EXPECT_FALSE(detached_activity(timeline(1, 5'000)).has_value());  // the gap is 45% of it
  Timeline with_steps = timeline(1, 0);
  with_steps.steps = {{10'000, 11'000}};  // the step windows decide, not the activity's extent
  EXPECT_FALSE(detached_activity(with_steps).has_value());
}

}  // namespace
}  // namespace meshscope::traces
