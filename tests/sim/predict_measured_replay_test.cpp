// sim/predict/measured_replay: a schedule replayed from a per-action cost table, one device per
// rank — the means it takes, the engine input it builds, and the bubbles theory gives.
#include "sim/predict/measured_replay.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/predict/trace_replay_costs.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/posted_receives.h"
#include "sim/schedule/validator.h"

namespace meshscope::predict {
namespace {

using schedule::ActionKind;
using schedule::Family;

schedule::Schedule make(Family f, int pp, int m, int v = 1) {
  schedule::GeneratorConfig g;
  g.family = f;
  g.mesh = {1, pp, 1};
  g.microbatches = m;
  g.virtual_stages = v;
  return schedule::generate(g);
}

// Every action priced by its kind: F = f, B = 2f, I = W = f, SEND = RECV = copy, the rest free.
std::vector<std::vector<int64_t>> table(const schedule::Schedule& s, int64_t f, int64_t copy = 0) {
  std::vector<std::vector<int64_t>> t;
  for (const auto& program : s.ranks) {
    t.emplace_back();
    for (const schedule::Action& a : program) {
      int64_t ns = 0;
      if (a.kind == ActionKind::kForward || a.kind == ActionKind::kInputGrad ||
          a.kind == ActionKind::kWeightGrad) {
        ns = f;
      } else if (a.kind == ActionKind::kBackward) {
        ns = 2 * f;
      } else if (schedule::is_p2p(a.kind)) {
        ns = copy;
      }
      t.back().push_back(ns);
    }
  }
  return t;
}

TEST(MeasuredReplay, EqualCostsGiveTheClosedFormBubbleOfGpipeAnd1f1b) {
  for (const Family f : {Family::kGpipe, Family::kOneFOneB}) {
    for (const auto& [p, m] : {std::pair{4, 8}, std::pair{8, 8}, std::pair{3, 5}}) {
      const schedule::Schedule s = make(f, p, m);
      const MeasuredReplay r = replay_measured(s, table(s, 1000));
      const double closed = static_cast<double>(p - 1) / (m + p - 1);
      EXPECT_NEAR(r.bubble_fraction, closed, 1e-9) << schedule::name(f) << " p=" << p;
      EXPECT_EQ(r.step_ns, (m + p - 1) * 3000) << schedule::name(f) << " p=" << p;
      EXPECT_EQ(r.device_bubbles.size(), static_cast<size_t>(p));
    }
  }
}

TEST(MeasuredReplay, InterleavedAndZeroBubbleReplayWithLessBubbleThan1f1b) {
  const schedule::Schedule one = make(Family::kOneFOneB, 4, 8);
  const schedule::Schedule zb = make(Family::kZbH1, 4, 8);
  const schedule::Schedule inter = make(Family::kInterleaved, 4, 8, 2);
  const double b1 = replay_measured(one, table(one, 1000)).bubble_fraction;
  // Interleaved stages hold half the layers each: half the cost per action.
  const double bi = replay_measured(inter, table(inter, 500)).bubble_fraction;
  const double bz = replay_measured(zb, table(zb, 1000)).bubble_fraction;
  EXPECT_LT(bi, b1 - 0.05);
  EXPECT_LT(bz, b1 - 0.05);
  // Megatron-LM's (p-1)/(v m + p - 1) for v = 2.
  EXPECT_NEAR(bi, 3.0 / (2 * 8 + 3), 1e-9);
}

TEST(MeasuredReplay, CostsAreTheMeasuredOnesPerStageAndKind) {
  const schedule::Schedule s = make(Family::kOneFOneB, 4, 8);
  auto t = table(s, 1000, 30);
  // Stage 2's forwards measured slower, one microbatch much slower: the mean takes them all.
  const int rank = s.stage_owner[2];
  int forwards = 0;
  for (size_t i = 0; i < s.ranks[rank].size(); ++i) {
    if (s.ranks[rank][i].kind != ActionKind::kForward) continue;
    t[rank][i] = forwards++ == 0 ? 1000 + 8 * 1000 : 2000;
  }
  const MeasuredCosts c = mean_costs(s, t);
  EXPECT_EQ(c.of(2, ActionKind::kForward), (9000 + 7 * 2000) / 8);
  EXPECT_EQ(c.of(1, ActionKind::kForward), 1000);
  EXPECT_EQ(c.of(1, ActionKind::kBackward), 2000);
  EXPECT_EQ(c.transfer_ns, 60);
  const engine::EngineInput in = replay_input(s, c);
  EXPECT_EQ(in.stages[2].forward_ns, c.of(2, ActionKind::kForward));
  EXPECT_EQ(in.links.at(0).latency_ns, 60);
  EXPECT_EQ(in.shared_processors, 0);

  const MeasuredReplay base = replay_measured(s, table(s, 1000, 30));
  const MeasuredReplay slow = replay_measured(s, t);
  EXPECT_GT(slow.step_ns, base.step_ns + 8 * 1000);  // the slow stage paces the whole pipeline
  const MeasuredReplay free_copies = replay_measured(s, table(s, 1000, 0));
  EXPECT_GT(base.step_ns, free_copies.step_ns);  // transfers cost their copies
}

TEST(MeasuredReplay, ACostTableOfAnotherShapeIsRefused) {
  const schedule::Schedule s = make(Family::kGpipe, 2, 2);
  auto t = table(s, 10);
  t.pop_back();
  EXPECT_THROW(mean_costs(s, t), std::invalid_argument);
  t = table(s, 10);
  t[0].pop_back();
  EXPECT_THROW(mean_costs(s, t), std::invalid_argument);
  t = table(s, 10);
  t[1][0] = -1;
  EXPECT_THROW(mean_costs(s, t), std::invalid_argument);
}

// `predict --from-trace` replays a job with each recv just before the compute that needs it
// (schedule::receives_where_needed); an OVERLAP_F_B pair runs as one action, so a recv its second
// member needs goes before the pair, which the validator then still takes.
TEST(RecvsWhereNeeded, KeepDualPipeVsOverlappedPairsWhole) {
  const schedule::Schedule s = schedule::receives_where_needed(make(Family::kDualPipeV, 4, 8, 2));
  bool grouped = false;
  for (const auto& acts : s.ranks) {
    for (size_t i = 0; i + 1 < acts.size(); ++i) {
      if (!acts[i].overlap_next) continue;
      grouped = true;
      EXPECT_TRUE(schedule::is_compute(acts[i + 1].kind)) << "a group split at action " << i + 1;
    }
  }
  EXPECT_TRUE(grouped);
  const schedule::ValidationResult v = schedule::validate(s);
  EXPECT_TRUE(v.ok()) << v.report(s);
}

}  // namespace
}  // namespace meshscope::predict
