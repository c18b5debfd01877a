// A mixture-of-experts workload executed with expert parallelism (ep = dp: experts sharded over
// the dp group, tokens dispatched and combined by all-to-all) equals one device routing the same
// groups, for ep 1, 2 and 4, top-1 and top-2, with and without dropped tokens, and with the moe
// blocks spread over pipeline stages; its all-to-alls are traced as typed collectives.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "exec_test_util.h"

namespace meshscope::exec {
namespace {

using schedule::Family;

constexpr int kSteps = 2;

// 4 moe blocks of h = 8 with 4 experts, batch 32.
model::WorkloadSpec moe_spec(int top_k, double capacity_factor, int ep) {
  model::WorkloadSpec s;
  s.kind = model::WorkloadKind::kMoe;
  s.layers = 4;
  s.hidden = 8;
  s.batch = 32;
  s.lr = 0.1f;
  s.seed = 5;
  s.experts = 4;
  s.top_k = top_k;
  s.capacity_factor = capacity_factor;
  s.ep = ep;
  return s;
}

// Capacity factor 0.5 keeps half of the choices at most (experts x capacity slots for tokens x k
// choices): tokens are dropped whatever the router does. A factor of `experts` keeps every one.
constexpr double kDrops = 0.5;
constexpr double kNoDrops = 4;

struct Case {
  std::string name;
  Family family;
  mesh::MeshShape mesh;
  int microbatches;
  int virtual_stages;
  int ep;
  int top_k;
  double capacity_factor;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

RunResult check(const Case& c) {
  const model::WorkloadSpec spec = moe_spec(c.top_k, c.capacity_factor, c.ep);
  const auto s =
      testing::make_schedule_for(spec, c.family, c.mesh, c.microbatches, c.virtual_stages);
  const RunResult got = testing::run_cpu(s, spec, kSteps);
  const int routing_rows = model::microbatch_rows(spec.batch, c.mesh.dp, c.microbatches);
  testing::expect_equivalent(got, run_reference(spec, kSteps, routing_rows), c.name);
  return got;
}

class MoeEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(MoeEquivalence, LossAndEveryWeightEqualOneDevice) { check(GetParam()); }

const std::vector<Case> kCases = {
    {"ep1 dp1 top1 drops", Family::kDataParallel, {1, 1, 1}, 2, 1, 1, 1, kDrops},
    {"ep1 dp2 top2 replicated experts", Family::kDataParallel, {2, 1, 1}, 2, 1, 1, 2, kNoDrops},
    {"ep2 dp2 top1 drops", Family::kDataParallel, {2, 1, 1}, 2, 1, 2, 1, kDrops},
    {"ep2 dp2 top1 no drops", Family::kDataParallel, {2, 1, 1}, 2, 1, 2, 1, kNoDrops},
    {"ep2 dp2 top2 drops", Family::kDataParallel, {2, 1, 1}, 2, 1, 2, 2, kDrops},
    {"ep2 dp2 top2 no drops", Family::kDataParallel, {2, 1, 1}, 2, 1, 2, 2, kNoDrops},
    {"ep4 dp4 top1 drops", Family::kDataParallel, {4, 1, 1}, 2, 1, 4, 1, kDrops},
    {"ep4 dp4 top2 no drops", Family::kDataParallel, {4, 1, 1}, 1, 1, 4, 2, kNoDrops},
    {"ep4 dp4 top2 factor 1.25", Family::kDataParallel, {4, 1, 1}, 2, 1, 4, 2, 1.25},
    // Moe blocks on several stages: the pipeline families, the I/W split of zero-bubble.
    {"1f1b ep2 dp2 pp2 top2 drops", Family::kOneFOneB, {2, 2, 1}, 4, 1, 2, 2, kDrops},
    {"gpipe ep2 dp2 pp4 top1", Family::kGpipe, {2, 4, 1}, 4, 1, 2, 1, 1.0},
    {"zb-h1 ep2 dp2 pp2 top2 drops", Family::kZbH1, {2, 2, 1}, 4, 1, 2, 2, kDrops},
    {"interleaved ep2 dp2 pp2 v2 top1 drops", Family::kInterleaved, {2, 2, 1}, 2, 2, 2, 1, kDrops},
    {"1f1b ep1 dp1 pp4 top2", Family::kOneFOneB, {1, 4, 1}, 4, 1, 1, 2, kDrops},
};

INSTANTIATE_TEST_SUITE_P(Runs, MoeEquivalence, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// The all-to-alls are collectives of the trace (op all_to_all over dp, the dispatch buffer's
// bytes), four per block and microbatch on every rank, inside the F and B spans; the gradient
// all-reduce over dp carries the dense parameters only.
TEST(MoeExecution, AllToAllsAreTracedAsCollectivesOverDp) {
  const Case c{"ep2 dp2", Family::kDataParallel, {2, 1, 1}, 2, 1, 2, 2, kDrops};
  const RunResult got = check(c);
  const model::WorkloadSpec spec = moe_spec(c.top_k, c.capacity_factor, c.ep);
  const int rows = model::microbatch_rows(spec.batch, 2, c.microbatches);  // 8 tokens
  const int capacity = model::expert_capacity(spec, rows);                 // ceil(.5*8*2/4) = 2
  ASSERT_EQ(capacity, 2);
  const int64_t bytes = 4 * spec.experts * capacity * spec.hidden;
  int all_to_all = 0, all_reduce = 0;
  for (const traces::SpanCollective& sc : got.timeline.collectives) {
    const traces::Span& span = got.timeline.spans[sc.span];
    if (sc.collective.op == traces::CollectiveOp::kAllToAll) {
      ++all_to_all;
      EXPECT_EQ(sc.collective.group, traces::GroupKind::kDp);
      EXPECT_EQ(sc.collective.bytes, bytes);
      EXPECT_EQ(span.bytes, bytes);
      EXPECT_EQ(span.kind, traces::SpanKind::kCollective);
    } else if (sc.collective.op == traces::CollectiveOp::kAllReduce) {
      ++all_reduce;
      // Routers only: 4 blocks of h x E + E; the experts (E / ep = 2 per rank) are not reduced.
      EXPECT_EQ(sc.collective.bytes, 4 * spec.layers * (spec.hidden * spec.experts + spec.experts));
    }
  }
  // 2 ranks x 4 blocks x 2 microbatches x 4 all-to-alls x kSteps.
  EXPECT_EQ(all_to_all, 2 * 4 * 2 * 4 * kSteps);
  EXPECT_EQ(all_reduce, 2 * kSteps);
  // The trace says what it is of (traces/run_descriptor.h): calibration and the what-if rebuild
  // the workload from it.
  const traces::WorkloadDescriptor& w = got.timeline.run.workload;
  EXPECT_EQ(w.kind, traces::ModelKind::kMoe);
  EXPECT_EQ(w.layers, spec.layers);
  EXPECT_EQ(w.hidden, spec.hidden);
  EXPECT_EQ(w.experts, spec.experts);
  EXPECT_EQ(w.top_k, spec.top_k);
  EXPECT_EQ(w.capacity_factor, spec.capacity_factor);
  EXPECT_EQ(w.ep, spec.ep);
}

TEST(MoeExecution, EpMustBeOneOrDp) {
  const model::WorkloadSpec spec = moe_spec(1, 1.0, 2);
  const auto s = testing::make_schedule_for(spec, Family::kDataParallel, {4, 1, 1}, 1);
  try {
    testing::run_cpu(s, spec, 1);
    FAIL() << "ep=2 on dp=4 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ep=2 must be 1 or equal dp=4"), std::string::npos)
        << e.what();
  }
  model::WorkloadSpec mlp = testing::small_mlp_spec(1);
  mlp.ep = 2;
  EXPECT_THROW(testing::run_cpu(
                   testing::make_schedule_for(mlp, Family::kDataParallel, {2, 1, 1}, 1), mlp, 1),
               std::invalid_argument);
}

TEST(MoeExecution, DpMembersMustRunTheMoeStagesInOneOrder) {
  // Rank 1 forwards its microbatches in the other order: its all-to-alls would pair microbatch 1
  // of rank 1 with microbatch 0 of rank 0. Refused before anything runs.
  const model::WorkloadSpec spec = moe_spec(1, 1.0, 2);
  auto s = testing::make_schedule_for(spec, Family::kDataParallel, {2, 1, 1}, 2);
  std::vector<size_t> forwards;
  for (size_t i = 0; i < s.ranks[1].size(); ++i)
    if (s.ranks[1][i].kind == schedule::ActionKind::kForward) forwards.push_back(i);
  ASSERT_EQ(forwards.size(), 2u);
  std::swap(s.ranks[1][forwards[0]], s.ranks[1][forwards[1]]);
  try {
    testing::run_cpu(s, spec, 1);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 action " + std::to_string(forwards[0])),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("in the same order"), std::string::npos) << e.what();
  }
}

TEST(MoeExecution, RoutingGroupsMatter) {
  // The reference with the whole batch as one routing group is another model once capacity
  // binds: the equivalence above is not a tautology of the routing.
  const model::WorkloadSpec spec = moe_spec(1, kDrops, 2);
  const auto one_group = run_reference(spec, 1, 0);
  const auto per_replica = run_reference(spec, 1, 8);
  EXPECT_NE(one_group.losses[0], per_replica.losses[0]);
}

}  // namespace
}  // namespace meshscope::exec
