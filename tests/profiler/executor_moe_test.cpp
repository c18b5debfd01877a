// A mixture-of-experts workload executed with expert parallelism (ep dividing dp: experts sharded
// over each ep group of ep consecutive dp replicas, tokens dispatched and combined by all-to-all
// over it, each expert replicated over the dp / ep replicas of its edp group) equals one device
// routing the same groups, for ep 1, 2, 4 on dp 2, 4 and 8, top-1 and top-2, with and without
// dropped tokens, and with the moe blocks spread over pipeline stages; its all-to-alls and its
// experts' gradient all-reduce are traced as typed collectives.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "exec_test_util.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/exec/rank_plan.h"
#include "profiler/runtime/cpu_backend.h"
#include "tests/sim/moe_spec.h"

namespace meshscope::exec {
namespace {

using schedule::Family;

constexpr int kSteps = 2;

// 4 moe blocks of h = 8 with 4 experts, batch 32.
model::WorkloadSpec moe_spec(int top_k, double capacity_factor, int ep) {
  model::WorkloadSpec s = model::testing::small_moe_spec(4, 32, top_k, capacity_factor, ep);
  s.lr = 0.1f;
  s.seed = 5;
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
    // ep a proper divisor of dp: two ep groups, every expert on two replicas (edp of 2).
    {"ep2 dp4 top1 drops", Family::kDataParallel, {4, 1, 1}, 2, 1, 2, 1, kDrops},
    {"ep2 dp4 top1 no drops", Family::kDataParallel, {4, 1, 1}, 2, 1, 2, 1, kNoDrops},
    {"ep2 dp4 top2 drops", Family::kDataParallel, {4, 1, 1}, 2, 1, 2, 2, kDrops},
    {"ep2 dp4 top2 no drops", Family::kDataParallel, {4, 1, 1}, 2, 1, 2, 2, kNoDrops},
    {"ep1 dp4 top2 drops", Family::kDataParallel, {4, 1, 1}, 2, 1, 1, 2, kDrops},
    {"ep4 dp8 top2 drops", Family::kDataParallel, {8, 1, 1}, 1, 1, 4, 2, kDrops},
    {"ep2 dp8 top1 factor 1.25", Family::kDataParallel, {8, 1, 1}, 2, 1, 2, 1, 1.25},
    {"1f1b ep2 dp4 pp2 top2 drops", Family::kOneFOneB, {4, 2, 1}, 4, 1, 2, 2, kDrops},
    {"zb-h1 ep2 dp4 pp2 top1 drops", Family::kZbH1, {4, 2, 1}, 2, 1, 2, 1, kDrops},
};

INSTANTIATE_TEST_SUITE_P(Runs, MoeEquivalence, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// Bytes of one expert's fc1 and fc2 with their biases (h -> 4h -> h).
int64_t expert_bytes(const model::WorkloadSpec& spec) {
  const int64_t h = spec.hidden, f = 4 * spec.hidden;
  return 4 * (h * f + f + f * h + h);
}

// The all-to-alls are collectives of the trace (op all_to_all over ep, the dispatch buffer's
// bytes), four per block and microbatch on every rank, inside the F and B spans; the gradient
// all-reduce over dp carries the dense parameters only, and with ep < dp the experts' gradients
// go over edp in a collective of their own, inside ALLREDUCE(dp) and before its dense reduction.
struct Traced {
  int all_to_all = 0, dp_reduce = 0, edp_reduce = 0;
};

Traced count_collectives(const RunResult& got, const model::WorkloadSpec& spec, int rows) {
  const int capacity = model::expert_capacity(spec, rows);
  const int64_t dispatch = 4 * spec.experts * capacity * spec.hidden;
  const int64_t routers = 4 * spec.layers * (spec.hidden * spec.experts + spec.experts);
  const int64_t experts = spec.layers * (spec.experts / spec.ep) * expert_bytes(spec);
  const traces::Timeline& t = got.timeline;
  Traced n;
  for (const traces::SpanCollective& sc : t.collectives) {
    const traces::Span& span = t.spans[sc.span];
    EXPECT_EQ(span.kind, traces::SpanKind::kCollective);
    EXPECT_EQ(span.bytes, sc.collective.bytes);
    if (sc.collective.op == traces::CollectiveOp::kAllToAll) {
      ++n.all_to_all;
      EXPECT_EQ(sc.collective.group, traces::GroupKind::kEp);
      EXPECT_EQ(sc.collective.bytes, dispatch);
      EXPECT_GE(span.microbatch, 0);
    } else if (sc.collective.group == traces::GroupKind::kDp) {
      ++n.dp_reduce;
      EXPECT_EQ(sc.collective.op, traces::CollectiveOp::kAllReduce);
      EXPECT_EQ(sc.collective.bytes, routers);  // the experts are not in it
    } else {
      ++n.edp_reduce;
      EXPECT_EQ(sc.collective.group, traces::GroupKind::kEdp);
      EXPECT_EQ(sc.collective.op, traces::CollectiveOp::kAllReduce);
      EXPECT_EQ(sc.collective.bytes, experts);
      // Its ALLREDUCE(dp) span on the same device begins once it is over.
      bool before_dense = false;
      for (const traces::SpanCollective& dense : t.collectives) {
        const traces::Span& d = t.spans[dense.span];
        if (dense.collective.group == traces::GroupKind::kDp && d.device == span.device &&
            d.begin_ns >= span.end_ns && d.stage == span.stage) {
          before_dense = true;
        }
      }
      EXPECT_TRUE(before_dense) << "edp all-reduce on device " << span.device;
    }
  }
  return n;
}

TEST(MoeExecution, AllToAllsAreTracedAsCollectivesOverEp) {
  const Case c{"ep2 dp2", Family::kDataParallel, {2, 1, 1}, 2, 1, 2, 2, kDrops};
  const RunResult got = check(c);
  const model::WorkloadSpec spec = moe_spec(c.top_k, c.capacity_factor, c.ep);
  const int rows = model::microbatch_rows(spec.batch, 2, c.microbatches);  // 8 tokens
  ASSERT_EQ(model::expert_capacity(spec, rows), 2);                        // ceil(.5*8*2/4)
  const Traced n = count_collectives(got, spec, rows);
  // 2 ranks x 4 blocks x 2 microbatches x 4 all-to-alls x kSteps.
  EXPECT_EQ(n.all_to_all, 2 * 4 * 2 * 4 * kSteps);
  EXPECT_EQ(n.dp_reduce, 2 * kSteps);
  EXPECT_EQ(n.edp_reduce, 0);  // ep = dp: every expert on one rank
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

TEST(MoeExecution, ReplicatedExpertsReduceOverEdpAndDenseOverDp) {
  const Case c{"ep2 dp4", Family::kDataParallel, {4, 1, 1}, 2, 1, 2, 1, kDrops};
  const RunResult got = check(c);
  const model::WorkloadSpec spec = moe_spec(c.top_k, c.capacity_factor, c.ep);
  const int rows = model::microbatch_rows(spec.batch, 4, c.microbatches);  // 4 tokens
  const Traced n = count_collectives(got, spec, rows);
  // 4 ranks x 4 blocks x 2 microbatches x 4 all-to-alls x kSteps.
  EXPECT_EQ(n.all_to_all, 4 * 4 * 2 * 4 * kSteps);
  EXPECT_EQ(n.dp_reduce, 4 * kSteps);
  EXPECT_EQ(n.edp_reduce, 4 * kSteps);  // one per rank, stage and step
  EXPECT_EQ(got.timeline.run.workload.ep, 2);
  EXPECT_EQ(got.timeline.run.mesh, (traces::MeshExtent{4, 1, 1}));
}

TEST(MoeExecution, EpMustDivideDp) {
  model::WorkloadSpec spec = moe_spec(1, 1.0, 8);
  spec.experts = 8;
  const auto s = testing::make_schedule_for(spec, Family::kDataParallel, {4, 1, 1}, 1);
  testing::expect_invalid_argument([&] { testing::run_cpu(s, spec, 1); }, {"ep=8 must divide dp=4"},
                                   "ep=8 on dp=4");
  model::WorkloadSpec mlp = testing::small_mlp_spec(1);
  mlp.ep = 2;
  EXPECT_THROW(testing::run_cpu(
                   testing::make_schedule_for(mlp, Family::kDataParallel, {2, 1, 1}, 1), mlp, 1),
               std::invalid_argument);
}

TEST(MoeExecution, ABackendWithoutTheWorkloadsEpIsRefused) {
  // Its transports would hold no ep group of 2: run_mesh says which mesh the run needs.
  const model::WorkloadSpec spec = moe_spec(1, 1.0, 2);
  const auto s = testing::make_schedule_for(spec, Family::kDataParallel, {4, 1, 1}, 1);
  EXPECT_EQ(run_mesh(s.mesh, spec), (mesh::MeshShape{.dp = 4, .pp = 1, .tp = 1, .ep = 2}));
  runtime::CpuBackend backend(s.mesh);
  capture::HostClockTracer tracer;
  testing::expect_invalid_argument([&] { run(testing::cpu_config(s, spec, 1), backend, tracer); },
                                   {"the backend's mesh has ep=1 but the workload ep=2"},
                                   "a mesh without ep");
}

TEST(MoeExecution, EpMembersMustRunTheMoeStagesInOneOrder) {
  // Rank 1 forwards its microbatches in the other order: its all-to-alls would pair microbatch 1
  // of rank 1 with microbatch 0 of rank 0. Refused before anything runs.
  const model::WorkloadSpec spec = moe_spec(1, 1.0, 2);
  auto s = testing::make_schedule_for(spec, Family::kDataParallel, {2, 1, 1}, 2);
  std::vector<size_t> forwards;
  for (size_t i = 0; i < s.ranks[1].size(); ++i)
    if (s.ranks[1][i].kind == schedule::ActionKind::kForward) forwards.push_back(i);
  ASSERT_EQ(forwards.size(), 2u);
  std::swap(s.ranks[1][forwards[0]], s.ranks[1][forwards[1]]);
  testing::expect_invalid_argument(
      [&] { testing::run_cpu(s, spec, 1); },
      {"rank 1 action " + std::to_string(forwards[0]), "in the same order"}, "swapped forwards");
}

// Swaps microbatches 0 and 1 in every action of `rank`'s program.
void swap_microbatches(schedule::Schedule& s, int rank) {
  for (schedule::Action& a : s.ranks[rank])
    if (a.microbatch == 0 || a.microbatch == 1) a.microbatch = 1 - a.microbatch;
}

TEST(MoeExecution, OnlyTheEpGroupMustAgreeOnTheOrder) {
  // dp 4 ep 2: ranks 2 and 3 (the second ep group) run microbatch 1 first. Their all-to-alls pair
  // among themselves, their experts' gradients meet the first group's in ALLREDUCE(dp), after
  // every microbatch: the same model.
  const model::WorkloadSpec spec = moe_spec(2, kDrops, 2);
  auto s = testing::make_schedule_for(spec, Family::kDataParallel, {4, 1, 1}, 2);
  swap_microbatches(s, 2);
  swap_microbatches(s, 3);
  const RunResult got = testing::run_cpu(s, spec, kSteps);
  testing::expect_equivalent(got, run_reference(spec, kSteps, 4), "second ep group reordered");
  // Rank 3 alone reordered: it pairs with rank 2, which did not.
  swap_microbatches(s, 2);
  testing::expect_invalid_argument([&] { testing::run_cpu(s, spec, 1); },
                                   {"rank 3 action", "rank 2 of its ep group"}, "rank 3 alone");
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
