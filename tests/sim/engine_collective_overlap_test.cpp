// Collectives that overlap compute (EngineInput::collective_overlap): gradient reductions that
// begin during the backward before them, what they hide when their stream is free and what they
// cannot hide when it is still busy; parameter gathers whose compute starts before they end.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/symmetry.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::engine {
namespace {

// Two dp replicas running the same program (one stage) of `microbatches`.
schedule::Schedule replicas(const std::string& program, int microbatches = 1) {
  return schedule::load("mesh dp=2 pp=1 tp=1\nmicrobatches " + std::to_string(microbatches) +
                        "\nrank 0: " + program + "\nrank 1: " + program + "\n");
}

EngineInput on(const schedule::Schedule& s, int64_t forward_ns, int64_t backward_ns) {
  EngineInput in;
  in.schedule = &s;
  in.stages.assign(1, StageTiming{});
  in.stages[0].forward_ns = forward_ns;
  in.stages[0].backward_ns = backward_ns;
  return in;
}

// [begin, end) of rank 0's collective spans, in time order.
std::vector<std::pair<int64_t, int64_t>> collectives_of_rank0(const EngineResult& r) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const traces::Span& sp : r.timeline.spans)
    if (sp.device == 0 && sp.kind == traces::SpanKind::kCollective)
      out.emplace_back(sp.begin_ns, sp.end_ns);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CollectiveOverlap, AReductionOnAFreeStreamHidesBehindItsBackward) {
  // F 100, B 200, then a 150 ns reduce-scatter whose buckets start with the backward: it runs from
  // 100 and ends when its last bucket (15 ns) does, 15 after the backward, not 150.
  const auto s = replicas("0F0 0B0 0REDUCESCATTER(dp):8 0STEP");
  EngineInput in = on(s, 100, 200);
  in.stages[0].optimizer_ns = 10;
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{150}; };
  EXPECT_EQ(simulate(in).step_time_ns, 100 + 200 + 150 + 10);  // none: after the backward
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 200, .tail_ns = 15};
  };
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 300 + 15 + 10);
  EXPECT_EQ(collectives_of_rank0(r), (std::vector<std::pair<int64_t, int64_t>>{{100, 315}}));
  EXPECT_EQ(simulate_symmetric(in).step_time_ns, r.step_time_ns);
  // Its thread blocks held a fifth of the SMs while it ran beside the backward (135 ns of it):
  // that costs the step a fifth of that.
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 200, .tail_ns = 15, .charge_share = 0.2};
  };
  EXPECT_EQ(simulate(in).step_time_ns, 300 + 15 + 27 + 10);
  // Longer than its backward: only the part beyond it shows.
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{500}; };
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 200, .tail_ns = 50};
  };
  EXPECT_EQ(simulate(in).step_time_ns, 100 + 500 + 10);
}

// A reduction after every microbatch's backward (ZeRO-2, FSDP): nothing waits for the first, so
// the SMs its hidden part held were charged to nobody, and ZeRO-2 cost what ZeRO-1 did. They slow
// the compute beside them, which the engine charges to the member's next compute action.
TEST(CollectiveOverlap, TheSmsAReductionHeldSlowTheComputeAfterItWhenNothingWaitsForIt) {
  const auto s = replicas("0F0 0B0 0REDUCESCATTER(dp):8 0F1 0B1 0REDUCESCATTER(dp):8 0STEP", 2);
  EngineInput in = on(s, 100, 200);
  in.stages[0].optimizer_ns = 10;
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{150}; };
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 200, .tail_ns = 15, .charge_share = 0.2};
  };
  const EngineResult r = simulate(in);
  // Each reduction hides 135 of its 150 ns behind its backward (a fifth of it, 27, charged): the
  // first from 100 to 315, F1 from 300 for 100 + 27, B1 to 627, the second from 427 to 642, then
  // the optimizer step for 10 + 27. (Before, the first's 27 went to its own end, which nothing
  // waited for: 652.)
  EXPECT_EQ(r.step_time_ns, 642 + 10 + 27);
  EXPECT_EQ(collectives_of_rank0(r),
            (std::vector<std::pair<int64_t, int64_t>>{{100, 315}, {427, 642}}));
  EXPECT_EQ(r.ranks[0].sm_held_ns, 2 * 27);
  EXPECT_EQ(simulate_symmetric(in).step_time_ns, r.step_time_ns);
}

TEST(CollectiveOverlap, ReductionsQueuedOnTheirStreamHideOnlyWhatItWasFreeFor) {
  // Four microbatches, each reducing its gradients (300 ns) after its backward (100 ns): the
  // stream is still busy with the previous reduction when each backward starts, so each waits for
  // it and then takes its full time. The step is the first forward, then four reductions.
  const auto s = replicas(
      "0F0 0B0 0REDUCESCATTER(dp):8 0F1 0B1 0REDUCESCATTER(dp):8 0F2 0B2 0REDUCESCATTER(dp):8 "
      "0F3 0B3 0REDUCESCATTER(dp):8 0STEP",
      4);
  auto step = [&](int64_t backward_ns) {
    EngineInput in = on(s, 50, backward_ns);
    in.collective_ns = [](int, const schedule::Action&) { return int64_t{300}; };
    in.collective_overlap = [backward_ns](int, const schedule::Action&) {
      return CollectiveOverlap{.lead_ns = backward_ns, .tail_ns = 30};
    };
    return simulate(in);
  };
  const EngineResult slow = step(100);
  EXPECT_EQ(slow.step_time_ns, 50 + 4 * 300);
  EXPECT_EQ(collectives_of_rank0(slow), (std::vector<std::pair<int64_t, int64_t>>{
                                            {50, 350}, {350, 650}, {650, 950}, {950, 1250}}));
  // A faster backward cannot make the step longer. (Pricing each reduction as what its own
  // backward leaves exposed, 300 - B, did: 950 ns at B = 100, 1100 at B = 50.)
  EXPECT_EQ(step(50).step_time_ns, 50 + 4 * 300);
  EXPECT_LE(step(10).step_time_ns, slow.step_time_ns);
  // Compute-bound (B 400 > 300): every reduction hides but its last bucket.
  EXPECT_EQ(step(400).step_time_ns, 4 * (50 + 400) + 30);
}

TEST(CollectiveOverlap, ReductionsReachedTogetherShareTheirBackward) {
  // A hybrid shard's reduce-scatter (80 ns) and the all-reduce of its shards across replicas
  // (40 ns) after one backward (200 ns): bucket by bucket, the stream does both during it, and
  // only their last buckets (8 + 4) follow it. Its span starts once the reduce-scatter's ends.
  const auto s = replicas("0F0 0B0 0REDUCESCATTER(dp):8 0ALLREDUCE(dp):4 0STEP");
  EngineInput in = on(s, 100, 200);
  in.collective_ns = [](int, const schedule::Action& a) { return a.bytes == 8 ? 80 : 40; };
  in.collective_overlap = [](int, const schedule::Action& a) {
    return CollectiveOverlap{.lead_ns = 200, .tail_ns = a.bytes == 8 ? 8 : 4};
  };
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 300 + 8 + 4);
  EXPECT_EQ(collectives_of_rank0(r),
            (std::vector<std::pair<int64_t, int64_t>>{{100, 308}, {308, 312}}));
  EXPECT_EQ(simulate_symmetric(in).step_time_ns, r.step_time_ns);
}

TEST(CollectiveOverlap, ACollectiveWaitsForItsLastMembersBackward) {
  // Rank 1's forward takes 100 ns longer, and so its backward ends later: the reduction cannot
  // begin before rank 1's backward did.
  const auto s = replicas("0F0 0B0 0REDUCESCATTER(dp):8 0STEP");
  EngineInput in = on(s, 100, 200);
  in.compute_action_ns = [](int rank, const schedule::Action& a) -> int64_t {
    return a.kind == schedule::ActionKind::kForward    ? (rank == 1 ? 200 : 100)
           : a.kind == schedule::ActionKind::kBackward ? 200
                                                       : 0;
  };
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{250}; };
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 200, .tail_ns = 10};
  };
  // Rank 1's backward runs 200..400: the reduction runs 200..450.
  EXPECT_EQ(simulate(in).step_time_ns, 450);
}

TEST(CollectiveOverlap, AGatherHoldsItsStreamWhileTheComputeThatUsesItStarts) {
  // ZeRO-3: a 300 ns parameter gather before each of F0 (200 ns) and B0 (400 ns), and a 250 ns
  // reduce-scatter after B0. Each forward or backward may start 100 ns into its gather (its first
  // layers have arrived), but the stream stays busy until the gather ends: the reduce-scatter,
  // which could begin with B0 at 400, begins when B0's gather ends, at 600.
  const auto s = replicas("0ALLGATHER(dp):4 0F0 0ALLGATHER(dp):4 0B0 0REDUCESCATTER(dp):8 0STEP");
  EngineInput in = on(s, 200, 400);
  in.collective_ns = [](int, const schedule::Action& a) { return a.bytes == 4 ? 300 : 250; };
  EXPECT_EQ(simulate(in).step_time_ns, 300 + 200 + 300 + 400 + 250);  // each waited for whole
  in.collective_overlap = [](int, const schedule::Action& a) {
    return a.bytes == 4 ? CollectiveOverlap{.release_ns = 100}
                        : CollectiveOverlap{.lead_ns = 400, .tail_ns = 10};
  };
  const EngineResult r = simulate(in);
  EXPECT_EQ(r.step_time_ns, 850);
  EXPECT_EQ(collectives_of_rank0(r),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 300}, {300, 600}, {600, 850}}));
  int64_t b_begin = -1;
  for (const traces::Span& sp : r.timeline.spans)
    if (sp.device == 0 && sp.kind == traces::SpanKind::kCompute &&
        sp.phase == traces::Phase::kBackward)
      b_begin = sp.begin_ns;
  EXPECT_EQ(b_begin, 400);
  EXPECT_EQ(simulate_symmetric(in).step_time_ns, r.step_time_ns);
  // A release at or past the gather's end is none: the compute waits for all of it.
  in.collective_overlap = [](int, const schedule::Action& a) {
    return a.bytes == 4 ? CollectiveOverlap{.release_ns = 300} : CollectiveOverlap{};
  };
  EXPECT_EQ(simulate(in).step_time_ns, 300 + 200 + 300 + 400 + 250);
}

TEST(CollectiveOverlap, AGatherHidesBehindTheComputeThatUsesIt) {
  // The same program, each gather hiding layer by layer (10 layers) behind the compute after it:
  // before F0 (200 ns) it leaves 300 - 200 = 100 ns exposed, before B0 (400 ns) only its last
  // layer's 30 ns, so B0 starts at 330. A gather nothing uses afterwards is waited for whole.
  const auto s = replicas("0ALLGATHER(dp):4 0F0 0ALLGATHER(dp):4 0B0 0REDUCESCATTER(dp):8 0STEP");
  EngineInput in = on(s, 200, 400);
  in.collective_ns = [](int, const schedule::Action& a) { return a.bytes == 4 ? 300 : 250; };
  in.collective_overlap = [](int, const schedule::Action& a) {
    return a.bytes == 4 ? CollectiveOverlap{.hide_layers = 10}
                        : CollectiveOverlap{.lead_ns = 400, .tail_ns = 10};
  };
  const EngineResult r = simulate(in);
  std::vector<int64_t> begins;
  for (const traces::Span& sp : r.timeline.spans)
    if (sp.device == 0 && sp.kind == traces::SpanKind::kCompute) begins.push_back(sp.begin_ns);
  std::sort(begins.begin(), begins.end());
  EXPECT_EQ(begins, (std::vector<int64_t>{100, 330, 850}));  // F0, B0, STEP
  EXPECT_EQ(r.step_time_ns, 850);  // the reduce-scatter still waits for B0's gather: 600 + 250
  const auto last = replicas("0F0 0B0 0ALLGATHER(dp):4");
  in.schedule = &last;
  EXPECT_EQ(simulate(in).step_time_ns, 200 + 400 + 300);
}

TEST(CollectiveOverlap, BadFiguresAreRefused) {
  const auto s = replicas("0F0 0B0 0REDUCESCATTER(dp):8 0STEP");
  EngineInput in = on(s, 100, 200);
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{150}; };
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = -1};
  };
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 10, .tail_ns = 1, .charge_share = 1.0};
  };
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.lead_ns = 10, .release_ns = 5};  // a reduction's and a gather's
  };
  EXPECT_THROW(simulate(in), std::invalid_argument);
  in.collective_overlap = [](int, const schedule::Action&) {
    return CollectiveOverlap{.release_ns = 5, .hide_layers = 2};  // two ways to one release
  };
  EXPECT_THROW(simulate(in), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::engine
