// The simulator on the families taken from torch: they finish with all their work, the V
// placement puts rank r's two chunks where torch does, and with equal F, I and W the zero-bubble
// families idle less than the schedules they improve on (Qi et al. 2023, sec. 6 and table 3).
#include <gtest/gtest.h>

#include "sim/engine/engine.h"
#include "sim/schedule/generators.h"
#include "tests/sim/engine_test_util.h"
#include "traces/analysis.h"

namespace meshscope::engine {
namespace {

using schedule::Family;
using testing::equal_stages;

schedule::Schedule make(Family f, int pp, int m, int v) {
  schedule::GeneratorConfig c;
  c.family = f;
  c.mesh = {.dp = 1, .pp = pp, .tp = 1};
  c.microbatches = m;
  c.virtual_stages = v;
  return schedule::generate(c);
}

// Step time of `f` on pp ranks with v chunks per rank, each chunk 1/v of a rank's layers.
int64_t step(Family f, int pp, int m, int v) {
  const auto s = make(f, pp, m, v);
  const int64_t unit = 6000 / v;  // F = I = W = unit per chunk: a rank's F+I+W is 18 us per mb
  return simulate(equal_stages(s, unit, unit, unit)).step_time_ns;
}

TEST(EngineTorchFamilies, EveryRankDoesAllItsWork) {
  for (const auto& [f, v] :
       {std::pair{Family::kZbV, 2}, std::pair{Family::kDualPipeV, 2},
        std::pair{Family::kInterleavedZeroBubble, 2}, std::pair{Family::kLoopedBfs, 3}}) {
    for (int pp : {2, 4}) {
      const int m = 2 * pp;
      const auto s = make(f, pp, m, v);
      const EngineResult r = simulate(equal_stages(s, 1000, 1000, 1000));
      ASSERT_EQ(r.ranks.size(), static_cast<size_t>(pp));
      // Lower bound: a rank's own compute, v chunks x m microbatches x (F + I + W).
      EXPECT_GE(r.step_time_ns, int64_t{v} * m * 3000) << name(f) << " pp=" << pp;
      for (const RankStats& rank : r.ranks) {
        EXPECT_EQ(rank.compute_ns, int64_t{v} * m * 3000) << name(f) << " pp=" << pp;
      }
    }
  }
}

TEST(EngineTorchFamilies, ZeroBubbleFamiliesBeatTheirBaselines) {
  for (int pp : {2, 4}) {
    const int m = 2 * pp;
    // Same layers per rank in every case: v chunks of 1/v.
    const int64_t ofob = step(Family::kOneFOneB, pp, m, 1);
    EXPECT_LT(step(Family::kZbH1, pp, m, 1), ofob) << pp;
    EXPECT_LT(step(Family::kZbV, pp, m, 2), step(Family::kZbH1, pp, m, 1)) << pp;
    EXPECT_LT(step(Family::kInterleavedZeroBubble, pp, m, 2), step(Family::kInterleaved, pp, m, 2))
        << pp;
    EXPECT_LT(step(Family::kDualPipeV, pp, m, 2), ofob) << pp;
    // Looped BFS runs every microbatch through a chunk first: GPipe-like fill per chunk.
    EXPECT_GE(step(Family::kLoopedBfs, pp, m, 2), step(Family::kInterleaved, pp, m, 2)) << pp;
  }
}

}  // namespace
}  // namespace meshscope::engine
