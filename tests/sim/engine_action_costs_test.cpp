// EngineInput::compute_action_ns: each compute action's own duration (a measured run replayed
// action by action) instead of its stage's timing.
#include <gtest/gtest.h>

#include "sim/engine/engine.h"
#include "sim/engine/symmetry.h"
#include "sim/schedule/generators.h"

namespace meshscope::engine {
namespace {

schedule::Schedule one_f_one_b(mesh::MeshShape shape, int microbatches) {
  schedule::GeneratorConfig c;
  c.family = schedule::Family::kOneFOneB;
  c.mesh = shape;
  c.microbatches = microbatches;
  return schedule::generate(c);
}

// What `stages` gives an action (the engine's own rule, restated for the tests' per-action costs).
int64_t stage_cost(const EngineInput& in, const schedule::Action& a) {
  const StageTiming& t = in.stages[static_cast<size_t>(a.stage)];
  switch (a.kind) {
    case schedule::ActionKind::kForward:
      return t.forward_ns;
    case schedule::ActionKind::kBackward:
      return t.backward_ns;
    default:
      return t.optimizer_ns;  // STEP
  }
}

EngineInput input_for(const schedule::Schedule& s) {
  EngineInput in;
  in.schedule = &s;
  for (int st = 0; st < s.num_stages; ++st) {
    StageTiming t;
    t.forward_ns = 1000 + 100 * st;
    t.backward_ns = 2000;
    t.input_grad_ns = 1000;
    t.weight_grad_ns = 1000;
    t.optimizer_ns = 300;
    in.stages.push_back(t);
  }
  in.links = {LinkSpec{1e18, 0}};
  in.build_timeline = false;
  return in;
}

TEST(EngineActionCosts, StageCostsGivenPerActionGiveTheSameStep) {
  const schedule::Schedule s = one_f_one_b({1, 4, 1}, 8);
  EngineInput in = input_for(s);
  const int64_t by_stage = simulate(in).step_time_ns;
  in.compute_action_ns = [&](int, const schedule::Action& a) { return stage_cost(in, a); };
  EXPECT_EQ(simulate(in).step_time_ns, by_stage);
}

TEST(EngineActionCosts, OneSlowActionOnTheCriticalPathDelaysTheStepByItsExtraTime) {
  const schedule::Schedule s = one_f_one_b({1, 4, 1}, 8);
  EngineInput in = input_for(s);
  const int64_t by_stage = simulate(in).step_time_ns;
  // The last backward of stage 0 ends the step: nothing overlaps its extra time.
  in.compute_action_ns = [&](int, const schedule::Action& a) {
    const int64_t base = stage_cost(in, a);
    const bool last =
        a.stage == 0 && a.kind == schedule::ActionKind::kBackward && a.microbatch == 7;
    return base + (last ? 5000 : 0);
  };
  EXPECT_EQ(simulate(in).step_time_ns, by_stage + 5000);
}

TEST(EngineActionCosts, ReplicasWithDifferentActionCostsAreNotSymmetric) {
  const schedule::Schedule s = one_f_one_b({2, 2, 1}, 4);
  EngineInput in = input_for(s);
  in.compute_action_ns = [](int, const schedule::Action&) { return int64_t{1000}; };
  EXPECT_TRUE(replicas_symmetric(in));
  in.compute_action_ns = [](int rank, const schedule::Action&) { return int64_t{1000 + rank}; };
  EXPECT_FALSE(replicas_symmetric(in));
}

}  // namespace
}  // namespace meshscope::engine
