#include "sim/engine/symmetry.h"

#include <gtest/gtest.h>

#include "sim/schedule/generators.h"

namespace meshscope::engine {
namespace {

schedule::Schedule make(schedule::Family f, mesh::MeshShape shape, int m, int v = 1) {
  schedule::GeneratorConfig c;
  c.family = f;
  c.mesh = shape;
  c.microbatches = m;
  c.virtual_stages = v;
  c.activation_bytes = {4 << 20};
  c.gradient_bytes = {64 << 20};
  return schedule::generate(c);
}

// Unequal stages, two link tiers by node of `per_node` ranks, collectives priced by bytes.
EngineInput input_for(const schedule::Schedule& s, int per_node) {
  EngineInput in;
  in.schedule = &s;
  for (int st = 0; st < s.num_stages; ++st) {
    StageTiming t;
    t.forward_ns = 1000 + 170 * st;
    t.input_grad_ns = 1100 + 90 * st;
    t.weight_grad_ns = 900;
    t.backward_ns = t.input_grad_ns + t.weight_grad_ns;
    t.optimizer_ns = 300;
    t.activation_bytes = 1000 * (st + 1);
    in.stages.push_back(t);
  }
  in.tier_of = [per_node](int a, int b) { return a / per_node == b / per_node ? 0 : 1; };
  in.links = {LinkSpec{4e9, 200}, LinkSpec{1e9, 900}};
  in.collective_ns = [](int, const schedule::Action& a) { return 500 + a.bytes / 100000; };
  return in;
}

void expect_same(const EngineResult& full, const EngineResult& once) {
  EXPECT_EQ(full.step_time_ns, once.step_time_ns);
  ASSERT_EQ(full.ranks.size(), once.ranks.size());
  for (size_t r = 0; r < full.ranks.size(); ++r) {
    EXPECT_EQ(full.ranks[r].compute_ns, once.ranks[r].compute_ns) << r;
    EXPECT_EQ(full.ranks[r].communication_ns, once.ranks[r].communication_ns) << r;
    EXPECT_EQ(full.ranks[r].end_ns, once.ranks[r].end_ns) << r;
    EXPECT_EQ(full.ranks[r].peak_activation_bytes, once.ranks[r].peak_activation_bytes) << r;
  }
  const traces::Timeline& a = full.timeline;
  const traces::Timeline& b = once.timeline;
  ASSERT_EQ(a.devices.size(), b.devices.size());
  ASSERT_EQ(a.spans.size(), b.spans.size());
  for (size_t i = 0; i < a.spans.size(); ++i) {
    const traces::Span& x = a.spans[i];
    const traces::Span& y = b.spans[i];
    ASSERT_EQ(x.device, y.device) << i;
    EXPECT_EQ(x.lane, y.lane);
    EXPECT_EQ(x.begin_ns, y.begin_ns) << i;
    EXPECT_EQ(x.end_ns, y.end_ns) << i;
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(a.span_name(x), b.span_name(y));
  }
  ASSERT_EQ(a.flows.size(), b.flows.size());
  for (size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(a.spans[a.flows[i].from].device, b.spans[b.flows[i].from].device);
    EXPECT_EQ(a.spans[a.flows[i].to].device, b.spans[b.flows[i].to].device);
  }
  for (size_t d = 0; d < a.devices.size(); ++d) EXPECT_EQ(a.devices[d].name, b.devices[d].name);
}

TEST(EngineSymmetry, ReplicasSimulatedOnceEqualTheFullSimulation) {
  struct Case {
    schedule::Family family;
    mesh::MeshShape shape;
    int m, v;
  };
  for (const Case& c : {Case{schedule::Family::kOneFOneB, {4, 4, 2}, 8, 1},
                        Case{schedule::Family::kGpipe, {2, 4, 2}, 6, 1},
                        Case{schedule::Family::kInterleaved, {2, 2, 4}, 4, 2},
                        Case{schedule::Family::kZbH1, {3, 4, 2}, 8, 1}}) {
    const auto s = make(c.family, c.shape, c.m, c.v);
    EngineInput in = input_for(s, c.shape.pp * c.shape.tp);  // a replica fills a node
    ASSERT_TRUE(replicas_symmetric(in)) << s.name;
    for (const bool blocking : {false, true}) {
      in.blocking_sends = blocking;
      in.blocking_reductions = blocking;
      const EngineResult full = simulate(in);
      const EngineResult once = simulate_symmetric(in, {.expand_timeline = true});
      EXPECT_LT(once.actions, full.actions);
      expect_same(full, once);
      EXPECT_FALSE(once.timeline.run.replicas_simulated_once);  // every device traced
    }
    // Not expanded, the representatives' devices stand for their replicas: typed for readers
    // (the mesh view's note), beside the whole run's mesh.
    const EngineResult reduced = simulate_symmetric(in);
    EXPECT_TRUE(reduced.timeline.run.replicas_simulated_once) << s.name;
    EXPECT_EQ(reduced.timeline.run.mesh, (traces::MeshExtent{c.shape.dp, c.shape.pp, c.shape.tp}));
    EXPECT_EQ(reduced.timeline.devices.size(), static_cast<size_t>(c.shape.pp));
  }
}

TEST(EngineSymmetry, DetectsReplicasThatDiffer) {
  const auto s = make(schedule::Family::kOneFOneB, {2, 3, 2}, 4);
  // Nodes of 8 ranks cut the second replica (ranks 6..11) across two nodes: its transfers use
  // other links than the first replica's.
  const EngineInput split = input_for(s, 8);
  EXPECT_FALSE(replicas_symmetric(split));
  EXPECT_THROW(simulate_symmetric(split), std::invalid_argument);
  // A schedule edited on one replica is not symmetric either.
  auto edited = s;
  std::swap(edited.ranks[7][0], edited.ranks[7][1]);
  const EngineInput e = input_for(edited, 6);
  EXPECT_FALSE(replicas_symmetric(e));
  EXPECT_TRUE(replicas_symmetric(input_for(s, 6)));
}

}  // namespace
}  // namespace meshscope::engine
