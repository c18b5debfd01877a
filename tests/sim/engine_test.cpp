#include "sim/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/engine/program.h"
#include "sim/engine/symmetry.h"
#include "sim/schedule/families.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"
#include "tests/sim/engine_test_util.h"
#include "traces/analysis.h"

namespace meshscope::engine {
namespace {

using schedule::Family;
using testing::equal_stages;

schedule::Schedule make(Family f, int dp, int pp, int m, int v = 1) {
  schedule::GeneratorConfig c;
  c.family = f;
  c.mesh = {.dp = dp, .pp = pp, .tp = 1};
  c.microbatches = m;
  c.virtual_stages = v;
  return schedule::generate(c);
}

TEST(Engine, GpipeAnd1f1bBubbleEqualsClosedForm) {
  for (Family f : {Family::kGpipe, Family::kOneFOneB}) {
    for (int p : {2, 4, 8}) {
      for (int m : {1, 4, 8, 13}) {
        const auto s = make(f, 1, p, m);
        const EngineResult r = simulate(equal_stages(s, 1000, 1000, 1000));
        EXPECT_EQ(r.step_time_ns, int64_t{m + p - 1} * 3000) << name(f) << " p=" << p << " m=" << m;
        const double closed = static_cast<double>(p - 1) / (m + p - 1);
        // Each rank's compute time leaves the closed form's idle share of the step.
        double compute_idle = 0;
        for (const RankStats& rank : r.ranks)
          compute_idle += 1.0 - static_cast<double>(rank.compute_ns) / r.step_time_ns;
        EXPECT_DOUBLE_EQ(compute_idle / static_cast<double>(r.ranks.size()), closed);
        EXPECT_DOUBLE_EQ(traces::analyze(r.timeline).bubble_fraction, closed);
      }
    }
  }
}

TEST(Engine, InterleavedBubbleShrinksByVirtualStages) {
  // Megatron-LM: with v chunks of 1/v the work each, the bubble is (p-1)/v of a full stage's
  // F+B, so the step is m (F+B) + (p-1)(F+B)/v and the bubble fraction (p-1)/(v m + p - 1).
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        const auto s = make(Family::kInterleaved, 1, p, m, v);
        const EngineResult r = simulate(equal_stages(s, 1000, 1000, 1000));
        EXPECT_EQ(r.step_time_ns, int64_t{v * m + p - 1} * 3000)
            << "p=" << p << " v=" << v << " m=" << m;
        EXPECT_DOUBLE_EQ(traces::analyze(r.timeline).bubble_fraction,
                         static_cast<double>(p - 1) / (v * m + p - 1));
      }
    }
  }
}

TEST(Engine, ZbH1BubbleFollowsItsDefinition) {
  // Qi et al. 2023: ZB-H1's bubble is (p-1)(T_F + T_B - T_W) against 1F1B's (p-1)(T_F + T_B + T_W)
  // (T_B: input gradient), when m >= p.
  for (int p : {2, 4, 6}) {
    for (int m : {p, 2 * p, 3 * p + 1}) {
      const auto s = make(Family::kZbH1, 1, p, m);
      const int64_t F = 1000, I = 1000, W = 1000;
      const EngineResult r = simulate(equal_stages(s, F, I, W));
      EXPECT_EQ(r.step_time_ns, m * (F + I + W) + (p - 1) * (F + I - W)) << "p=" << p << " m=" << m;
    }
  }
}

TEST(Engine, ZbH1StepWithUnequalCosts) {
  // The paper's form assumes the deferred W's fill the cool-down: W <= min(F, I). Beyond that the
  // last rank, which cannot begin before (p-1)F, or the I chain back to rank 0 decides:
  // m(F+I+W) + (p-1) max(F, I, F+I-W), which is the paper's where W <= min(F, I).
  const int64_t costs[][3] = {{1000, 1000, 2000}, {1000, 2000, 2000}, {2000, 1000, 1500},
                              {1000, 1200, 800},  {1500, 1000, 500},  {1000, 3000, 1500}};
  for (const auto& [F, I, W] : costs) {
    for (int p : {2, 4, 8}) {
      for (int m : {p, 2 * p, 2 * p + 3}) {
        const EngineResult r = simulate(equal_stages(make(Family::kZbH1, 1, p, m), F, I, W));
        EXPECT_EQ(r.step_time_ns, m * (F + I + W) + (p - 1) * std::max({F, I, F + I - W}))
            << "F=" << F << " I=" << I << " W=" << W << " p=" << p << " m=" << m;
      }
    }
  }
}

TEST(Engine, PeakActivationsFollowTheSchedule) {
  const int p = 4, m = 8;
  const auto gpipe = simulate(equal_stages(make(Family::kGpipe, 1, p, m), 1000, 1000, 1000));
  const auto ofob = simulate(equal_stages(make(Family::kOneFOneB, 1, p, m), 1000, 1000, 1000));
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(gpipe.ranks[r].peak_activation_bytes, 100 * m);       // GPipe keeps all m
    EXPECT_EQ(ofob.ranks[r].peak_activation_bytes, 100 * (p - r));  // 1F1B at most p - rank
  }
}

TEST(Engine, PeakActivationIsKnownFromTheProgramAlone) {
  // predict's search skips the engine for configurations over memory on the strength of this.
  for (Family f : {Family::kGpipe, Family::kOneFOneB, Family::kInterleaved, Family::kZbH1,
                   Family::kDualPipeV}) {
    const int p = 4, v = schedule::info(f).default_virtual_stages;
    const auto s = make(f, 2, p, 3 * p, v);
    EngineInput in = equal_stages(s, 1000, 700, 300);
    for (size_t st = 0; st < in.stages.size(); ++st) {  // stages that differ
      in.stages[st].activation_bytes = 100 + 10 * static_cast<int64_t>(st);
      in.stages[st].weight_grad_bytes = 30 + static_cast<int64_t>(st);
    }
    const EngineResult r = simulate(in);
    for (int rank = 0; rank < s.mesh.size(); ++rank)
      EXPECT_EQ(peak_activation(s.ranks[rank], in.stages), r.ranks[rank].peak_activation_bytes)
          << name(f) << " rank " << rank;
  }
}

TEST(Engine, ZbH1KeepsTheMemoryOf1f1b) {
  // Qi et al. 2023: ZB-H1 keeps 1F1B's peak (p microbatches on the first rank). Rank r holds
  // p - r microbatches like 1F1B, plus the W-only part (A_W) of the r weight gradients it defers.
  for (int p : {2, 4, 6}) {
    const auto r = simulate(equal_stages(make(Family::kZbH1, 1, p, 2 * p), 1000, 1000, 1000));
    for (int rank = 0; rank < p; ++rank) {
      EXPECT_EQ(r.ranks[rank].peak_activation_bytes, 100 * (p - rank) + 40 * rank)
          << "p=" << p << " rank " << rank;
      EXPECT_LE(r.ranks[rank].peak_activation_bytes, 100 * p);
    }
  }
}

TEST(Engine, InterleavedHoldsMegatronsWarmupPlusOne) {
  // Megatron-LM's interleaved 1F1B runs (p - r - 1) * 2 + (v - 1) * p warm-up forwards on rank r,
  // then one more before its first backward: that many chunk activations at the peak.
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      const int m = 4 * p;
      const auto r =
          simulate(equal_stages(make(Family::kInterleaved, 1, p, m, v), 1000, 1000, 1000));
      for (int rank = 0; rank < p; ++rank) {
        const int held = std::min(v * m, (p - rank - 1) * 2 + (v - 1) * p + 1);
        EXPECT_EQ(r.ranks[rank].peak_activation_bytes, 100 * held)
            << "p=" << p << " v=" << v << " rank " << rank;
      }
    }
  }
}

TEST(Engine, TimelineLooksLikeTheExecutors) {
  const auto s = make(Family::kOneFOneB, 2, 2, 4);
  EngineInput in = equal_stages(s, 1000, 1000, 1000);
  in.links = {LinkSpec{1e9, 500}};
  for (StageTiming& t : in.stages) t.p2p_bytes = 1000;
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{700}; };
  const EngineResult r = simulate(in);
  const traces::Timeline& tl = r.timeline;
  ASSERT_EQ(tl.devices.size(), 4u);
  EXPECT_EQ(tl.devices[3].name, "rank 3 \u00b7 dp1 pp1 tp0");
  EXPECT_EQ(tl.metadata.at("source"), "sim");
  EXPECT_EQ(tl.steps.size(), 1u);
  // Every send has a flow to a recv of equal interval and bytes: 500 ns latency + 1000 B at 1 GB/s.
  size_t sends = 0;
  for (const traces::Flow& f : tl.flows) {
    const traces::Span& a = tl.spans[f.from];
    const traces::Span& b = tl.spans[f.to];
    EXPECT_EQ(a.kind, traces::SpanKind::kSend);
    EXPECT_EQ(b.kind, traces::SpanKind::kRecv);
    EXPECT_EQ(a.begin_ns, b.begin_ns);
    EXPECT_EQ(a.end_ns, b.end_ns);
    EXPECT_EQ(a.duration_ns(), 1500);
    EXPECT_EQ(a.bytes, 1000);
    ++sends;
  }
  EXPECT_EQ(sends, 2u * 2 * 4);  // 2 replicas x (F and B) x 4 microbatches
  int collectives = 0;
  for (const traces::Span& sp : tl.spans)
    if (sp.kind == traces::SpanKind::kCollective) {
      EXPECT_EQ(sp.duration_ns(), 700);
      ++collectives;
    }
  EXPECT_EQ(collectives, 4);  // one dp all-reduce per rank
  EXPECT_FALSE(tl.counters.empty());
  // Stages whose activations are unknown (0 bytes, as a replay of measured times has) get no
  // counter: a peak of 0 B would read as measured.
  for (StageTiming& t : in.stages) t.activation_bytes = 0;
  EXPECT_TRUE(simulate(in).timeline.counters.empty());
}

// Free stages, one link tier of 1 GB/s without latency: a 1 MB transfer alone takes 1 ms.
EngineInput on_one_link(const schedule::Schedule& s) {
  EngineInput in;
  in.schedule = &s;
  in.stages.assign(s.num_stages, StageTiming{});
  in.links = {LinkSpec{1e9, 0}};
  return in;
}

TEST(Engine, TransfersShareAPortsBandwidth) {
  // Ranks 0 and 2 both send 1 MB to rank 1 at t=0: sharing rank 1's ingress, both take twice as
  // long as one alone.
  const auto s = schedule::load(
      "mesh dp=1 pp=3 tp=1\nmicrobatches 1\nstages 3\n"
      "rank 0: 0F0 0SEND_F0@1:1000000\n"
      "rank 1: 1RECV_F0@0:1000000 1RECV_B0@2:1000000\n"
      "rank 2: 2F0 2SEND_B0@1:1000000\n");
  EngineInput in = on_one_link(s);
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 2'000'000);
  // The same transfers one after the other on different ports do not slow each other.
  const auto t = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\nstages 2\n"
      "rank 0: 0F0 0SEND_F0@1:1000000\nrank 1: 1RECV_F0@0:1000000\n");
  in.schedule = &t;
  EXPECT_EQ(simulate(in).step_time_ns, 1'000'000);
  // Rank 2 starts its send 0.5 ms late: the first transfer moves half its bytes alone, the rest
  // at half the rate (done at 1.5 ms); the second then has half its bytes left at the whole rate
  // (done at 2 ms). Losing what the first moved alone would end both at 2.5 ms.
  in.schedule = &s;
  in.stages[2].forward_ns = 500'000;
  EXPECT_EQ(simulate(in).step_time_ns, 2'000'000);
}

// When the first compute of microbatch 1 (its forward) began; -1 if none ran.
int64_t second_f_starts(const EngineResult& r) {
  for (const traces::Span& sp : r.timeline.spans)
    if (sp.kind == traces::SpanKind::kCompute && sp.microbatch == 1) return sp.begin_ns;
  return -1;
}

TEST(Engine, BlockingSendsHoldTheNextCompute) {
  // Rank 0 runs F0 (1 ms), sends 1 MB (1 ms on the link), then F1 and sends again. Sends beside
  // the compute: F1 runs while the first send moves, rank 1 has both by 3 ms. Blocking sends: F1
  // waits for the first send, so the second arrives at 4 ms.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 2\nstages 2\n"
      "rank 0: 0F0 0SEND_F0@1:1000000 0F1 0SEND_F1@1:1000000\n"
      "rank 1: 1RECV_F0@0:1000000 1RECV_F1@0:1000000\n");
  EngineInput in = on_one_link(s);
  in.stages[0].forward_ns = 1'000'000;
  const EngineResult beside = simulate(in);
  EXPECT_EQ(second_f_starts(beside), 1'000'000);
  EXPECT_EQ(beside.step_time_ns, 3'000'000);
  in.blocking_sends = true;
  const EngineResult blocking = simulate(in);
  EXPECT_EQ(second_f_starts(blocking), 2'000'000);
  EXPECT_EQ(blocking.step_time_ns, 4'000'000);
}

TEST(Engine, BlockingReductionsHoldTheNextCompute) {
  // ZeRO-2's reduce-scatter after each microbatch's backward (2 ms). Beside the compute: F1 runs
  // while the first one moves. Reduced on the compute stream (a framework that does not overlap
  // them): F1 waits for it, and the step grows by its 2 ms.
  const auto s = schedule::load(
      "mesh dp=2 pp=1 tp=1\nmicrobatches 2\n"
      "rank 0: 0F0 0B0 0REDUCESCATTER(dp):8 0F1 0B1 0REDUCESCATTER(dp):8 0STEP\n"
      "rank 1: 0F0 0B0 0REDUCESCATTER(dp):8 0F1 0B1 0REDUCESCATTER(dp):8 0STEP\n");
  EngineInput in = on_one_link(s);
  in.stages[0] = StageTiming{1'000'000, 1'000'000, 0, 0, 0};
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{2'000'000}; };
  const EngineResult beside = simulate(in);
  EXPECT_EQ(second_f_starts(beside), 2'000'000);
  in.blocking_reductions = true;
  const EngineResult blocking = simulate(in);
  EXPECT_EQ(second_f_starts(blocking), 4'000'000);
  EXPECT_EQ(blocking.step_time_ns - beside.step_time_ns, 2'000'000);
}

TEST(Engine, CollectivesTakeTheirShareOfTheLinks) {
  // Each replica sends 1 MB from pp 0 to pp 1 while its pp 0 rank runs a 2 ms dp all-reduce on
  // the same ports: the transfer gets half the link and takes 2 ms instead of 1.
  const auto s = schedule::load(
      "mesh dp=2 pp=2 tp=1\nmicrobatches 1\nstages 2\n"
      "rank 0: 0ALLREDUCE(dp):8 0F0 0SEND_F0@1:1000000\n"
      "rank 1: 1RECV_F0@0:1000000 1F0\n"
      "rank 2: 0ALLREDUCE(dp):8 0F0 0SEND_F0@3:1000000\n"
      "rank 3: 1RECV_F0@2:1000000 1F0\n");
  EngineInput in = on_one_link(s);
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{2'000'000}; };
  auto recv_ns = [](const EngineResult& r) {
    for (const traces::Span& sp : r.timeline.spans)
      if (sp.kind == traces::SpanKind::kRecv) return sp.duration_ns();
    return int64_t{0};
  };
  EXPECT_EQ(recv_ns(simulate(in)), 1'000'000);
  in.collective_tier = [](int, const schedule::Action&) { return 0; };
  EXPECT_EQ(recv_ns(simulate(in)), 2'000'000);
}

TEST(Engine, CollectiveStartsWhenEveryMemberArrives) {
  const auto s = schedule::load(
      "mesh dp=2 pp=1 tp=1\nmicrobatches 1\n"
      "rank 0: 0F0 0B0 0ALLREDUCE(dp):64 0STEP\n"
      "rank 1: 0F0 0B0 0ALLREDUCE(dp):64 0STEP\n");
  EngineInput in;
  in.schedule = &s;
  in.stages.assign(1, StageTiming{});
  in.stages[0].forward_ns = 100;
  in.stages[0].backward_ns = 200;
  in.stages[0].optimizer_ns = 10;
  in.collective_ns = [](int rank, const schedule::Action&) { return int64_t{rank == 0 ? 50 : 50}; };
  EXPECT_EQ(simulate(in).step_time_ns, 100 + 200 + 50 + 10);
}

TEST(Engine, RanksSharingProcessorsSlowEachOtherDown) {
  // Four independent replicas (F 1000 + B 2000, two microbatches each) on two cores: all four
  // compute at once at half speed, so the step takes twice its work.
  const auto s = make(Family::kDataParallel, 4, 1, 2);
  EngineInput in = equal_stages(s, 1000, 1000, 1000);
  EXPECT_EQ(simulate(in).step_time_ns, 6000);
  in.shared_processors = 2;
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 12000);
  EXPECT_EQ(r.ranks[0].compute_ns, 12000);
  in.shared_processors = 4;
  EXPECT_EQ(simulate(in).step_time_ns, 6000);
  // A pipeline's idle ranks leave their core to the busy ones: 1F1B p = 4 on 2 cores is slower
  // than on 4, but by less than 2x.
  const auto pipe = make(Family::kOneFOneB, 1, 4, 8);
  EngineInput pin = equal_stages(pipe, 1000, 1000, 1000);
  const int64_t own = simulate(pin).step_time_ns;
  pin.shared_processors = 2;
  const int64_t shared = simulate(pin).step_time_ns;
  EXPECT_GT(shared, own);
  EXPECT_LT(shared, 2 * own);
}

TEST(Engine, CollectivesHoldingProcessorsSlowTheComputeBesideThem) {
  // Both replicas issue two all-reduces (400 ns each, one after the other on the collective
  // stream) and then run F0 (1000 ns) beside them. The second holds half the processors: F0 does
  // 400 ns of work by 400, 200 more by 800, and the last 400 at full speed, ending at 1200.
  const auto s = schedule::load(
      "mesh dp=2 pp=1 tp=1\nmicrobatches 1\n"
      "rank 0: 0ALLREDUCE(dp):8 0ALLREDUCE(dp):16 0F0\n"
      "rank 1: 0ALLREDUCE(dp):8 0ALLREDUCE(dp):16 0F0\n");
  EngineInput in = equal_stages(s, 1000, 0, 0);
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{400}; };
  EXPECT_EQ(simulate(in).step_time_ns, 1000);
  in.collective_sm_share = [](int, const schedule::Action& a) { return a.bytes == 16 ? 0.5 : 0; };
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 1200);
  for (const RankStats& st : r.ranks) {
    EXPECT_EQ(st.compute_ns, 1200);
    EXPECT_EQ(st.sm_held_ns, 200);
  }
  // The replicas are alike: simulated once, the same.
  EXPECT_EQ(simulate_symmetric(in).step_time_ns, 1200);
  // Compute that starts after the collective has ended runs at full speed.
  const auto after = schedule::load(
      "mesh dp=2 pp=1 tp=1\nmicrobatches 1\n"
      "rank 0: 0F0 0ALLREDUCE(dp):16 0STEP\n"
      "rank 1: 0F0 0ALLREDUCE(dp):16 0STEP\n");
  in.schedule = &after;
  in.stages[0].optimizer_ns = 100;
  const EngineResult a = simulate(in);
  EXPECT_EQ(a.step_time_ns, 1000 + 400 + 100);
  EXPECT_EQ(a.ranks[0].sm_held_ns, 0);
  // A share of all the processors, or one beside cores shared by ranks, is refused.
  in.collective_sm_share = [](int, const schedule::Action&) { return 1.0; };
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.collective_sm_share = [](int, const schedule::Action&) { return 0.25; };
  in.shared_processors = 1;
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

TEST(Engine, ReportsDeadlockInsteadOfHanging) {
  // Both ranks wait for the other's data before producing their own.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 0RECV_B0@1 0B0 0F0 0SEND_F0@1\n"
      "rank 1: 1RECV_F0@0 1F0 1B0 1SEND_B0@0\n");
  EngineInput in;
  in.schedule = &s;
  in.stages.assign(2, StageTiming{1, 1, 0, 0, 0});
  try {
    simulate(in);
    FAIL() << "expected a deadlock";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(
                  "rank 0 at action 0 '0RECV_B0@1' (waiting for rank 1 to send it)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Engine, RejectsUnmatchedTransfersAndCollectives) {
  EngineInput in;
  in.stages.assign(2, StageTiming{});
  const auto lone_send =
      schedule::load("mesh dp=1 pp=2 tp=1\nmicrobatches 1\nrank 0: 0F0 0SEND_F0\nrank 1: 1F0\n");
  in.schedule = &lone_send;
  EXPECT_THROW(simulate(in), SimulationError);
  const auto lone_recv =
      schedule::load("mesh dp=1 pp=2 tp=1\nmicrobatches 1\nrank 0: 0F0\nrank 1: 1RECV_F0 1F0\n");
  in.schedule = &lone_recv;
  EXPECT_THROW(simulate(in), SimulationError);
  const auto half_collective = schedule::load(
      "mesh dp=2 pp=1 tp=1\nmicrobatches 1\nrank 0: 0F0 0ALLREDUCE(dp):8\nrank 1: 0F0\n");
  in.schedule = &half_collective;
  in.stages.resize(1);
  EXPECT_THROW(simulate(in), SimulationError);
}

}  // namespace
}  // namespace meshscope::engine
