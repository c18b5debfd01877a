// The executable workloads: their shapes, losses, tensor-parallel splits and the errors on bad
// specs; the balanced partition into stages.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/model/partition.h"
#include "sim/model/workload.h"
#include "tests/sim/moe_spec.h"

namespace meshscope::model {
namespace {

TEST(ModelWorkload, SeedChainIsThreeLinearsOneTwoThreeOne) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kChain;
  const Workload w = make_workload(spec);
  ASSERT_EQ(w.units.size(), 3u);
  EXPECT_EQ(w.units[0].linears[0].in, 1);
  EXPECT_EQ(w.units[0].linears[0].out, 2);
  EXPECT_EQ(w.units[1].linears[0].out, 3);
  EXPECT_EQ(w.units[2].linears[0].out, 1);
  EXPECT_EQ(w.loss, LossKind::kMse);
  EXPECT_EQ(w.parameters(), (1 * 2 + 2) + (2 * 3 + 3) + (3 * 1 + 1));
}

TEST(ModelWorkload, ClassifierIsMnistShapedWithMegatronSplit) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kClassifier;
  spec.batch = 64;
  const Workload w = make_workload(spec);
  ASSERT_EQ(w.units.size(), 2u);
  const LinearSpec& fc1 = w.units[0].linears[0];
  const LinearSpec& fc2 = w.units[1].linears[0];
  EXPECT_EQ(fc1.in, 784);
  EXPECT_EQ(fc1.out, 256);
  EXPECT_EQ(fc1.act, Activation::kRelu);
  EXPECT_EQ(fc1.split, TpSplit::kColumn);
  EXPECT_EQ(fc2.out, 10);
  EXPECT_EQ(fc2.split, TpSplit::kRow);
  EXPECT_EQ(w.loss, LossKind::kSoftmaxCrossEntropy);
  EXPECT_DOUBLE_EQ(loss_scale(w), 1.0 / 64);
  EXPECT_EQ(local_out(fc1, 4), 64);
  EXPECT_EQ(local_in(fc2, 4), 64);
  EXPECT_EQ(local_in(fc1, 4), 784);
}

TEST(ModelWorkload, MlpBlocksAreResidualGeluSizedByTheSpec) {
  WorkloadSpec spec;
  spec.layers = 5;
  spec.hidden = 12;
  spec.batch = 8;
  const Workload w = make_workload(spec);
  ASSERT_EQ(w.units.size(), 5u);
  for (const Unit& u : w.units) {
    EXPECT_TRUE(u.residual);
    ASSERT_EQ(u.linears.size(), 2u);
    EXPECT_EQ(u.linears[0].in, 12);
    EXPECT_EQ(u.linears[0].out, 48);
    EXPECT_EQ(u.linears[0].act, Activation::kGelu);
    EXPECT_EQ(u.linears[1].out, 12);
  }
  EXPECT_EQ(w.parameters(), 5 * (12 * 48 + 48 + 48 * 12 + 12));
  EXPECT_DOUBLE_EQ(loss_scale(w), 1.0 / (8 * 12));  // MSE: mean over samples and outputs
  EXPECT_EQ(w.describe(), "mlp L=5 h=12 batch=8");
  EXPECT_NO_THROW(check_tp(w, 4));
  EXPECT_THROW(check_tp(w, 5), std::invalid_argument);  // 48 hidden units over 5 ranks
}

TEST(ModelWorkload, AModelWithNoLayerSplitOverTpRunsOnlyAtTpOne) {
  // The seed chain's linears are whole on every rank: at tp 2 each rank would compute the whole
  // model, and "equal to one device" would test nothing of tensor parallelism.
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kChain;
  const Workload w = make_workload(spec);
  EXPECT_NO_THROW(check_tp(w, 1));
  try {
    check_tp(w, 2);
    FAIL() << "tp=2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has no layer split over tp"), std::string::npos)
        << e.what();
  }
}

TEST(ModelWorkload, MoeBlocksAreARouterAndTheExpertsFfns) {
  // 3 blocks, batch 16, top-2, capacity factor 1.25, ep 2.
  WorkloadSpec spec = testing::small_moe_spec(3, 16, 2, 1.25, 2);
  const Workload w = make_workload(spec);
  ASSERT_EQ(w.units.size(), 3u);
  for (const Unit& u : w.units) {
    EXPECT_EQ(u.kind, UnitKind::kMoe);
    EXPECT_TRUE(u.residual);
    ASSERT_EQ(u.linears.size(), 1u + 2 * 4);
    EXPECT_EQ(u.linears[kMoeRouter].in, 8);
    EXPECT_EQ(u.linears[kMoeRouter].out, 4);
    EXPECT_EQ(u.linears[kMoeRouter].expert, -1);
    for (int e = 0; e < 4; ++e) {
      EXPECT_EQ(u.linears[moe_fc1(e)].expert, e);
      EXPECT_EQ(u.linears[moe_fc1(e)].out, 32);
      EXPECT_EQ(u.linears[moe_fc1(e)].act, Activation::kGelu);
      EXPECT_EQ(u.linears[moe_fc2(e)].expert, e);
      EXPECT_EQ(u.linears[moe_fc2(e)].in, 32);
      EXPECT_EQ(u.linears[moe_fc2(e)].out, 8);
    }
  }
  EXPECT_EQ(w.parameters(), 3 * ((8 * 4 + 4) + 4 * (8 * 32 + 32 + 32 * 8 + 8)));
  EXPECT_EQ(w.describe(), "moe L=3 h=8 E=4 k=2 cf=1.25 ep=2 batch=16");
  // ceil(1.25 x 8 x 2 / 4) = 5; exact products are not rounded up (1 x 8 x 2 / 4 = 4).
  EXPECT_EQ(expert_capacity(spec, 8), 5);
  spec.capacity_factor = 1;
  EXPECT_EQ(expert_capacity(spec, 8), 4);
  spec.capacity_factor = 1.1;
  spec.experts = 11;
  spec.ep = 1;
  EXPECT_EQ(expert_capacity(spec, 10), 2);  // 1.1 x 10 x 2 / 11 = 2.0000000000000004 in double
  EXPECT_EQ(first_local_expert(spec, 0), 0);
  spec.experts = 8;
  spec.ep = 4;
  EXPECT_EQ(local_experts(spec), 2);
  EXPECT_EQ(first_local_expert(spec, 3), 6);
  EXPECT_THROW(check_tp(make_workload(spec), 2), std::invalid_argument);
}

TEST(ModelWorkload, MoeRejectsWhatCannotRoute) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kMoe;
  spec.experts = 4;
  spec.top_k = 5;
  EXPECT_THROW(make_workload(spec), std::invalid_argument);  // more choices than experts
  spec.top_k = 1;
  spec.ep = 3;
  EXPECT_THROW(make_workload(spec), std::invalid_argument);  // 4 experts over 3 ranks
  spec.ep = 1;
  for (const double f : {0.0, -1.0, 4.5, std::nan("")}) {
    spec.capacity_factor = f;
    EXPECT_THROW(make_workload(spec), std::invalid_argument) << f;
  }
}

TEST(ModelWorkload, RejectsBadSpecsAndParsesNames) {
  WorkloadSpec spec;
  spec.layers = 0;
  EXPECT_THROW(make_workload(spec), std::invalid_argument);
  spec.layers = 2;
  spec.batch = 0;
  EXPECT_THROW(make_workload(spec), std::invalid_argument);
  EXPECT_EQ(parse_workload_kind("classifier"), WorkloadKind::kClassifier);
  EXPECT_EQ(parse_workload_kind("gpt"), std::nullopt);
}

TEST(ModelPartition, ContiguousBalancedWithExtraLayersFirst) {
  const auto p = partition_units(10, 4);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].first_unit, 0);
  EXPECT_EQ(p[0].size(), 3);
  EXPECT_EQ(p[1].size(), 3);
  EXPECT_EQ(p[2].size(), 2);
  EXPECT_EQ(p[3].end_unit, 10);
  for (size_t i = 1; i < p.size(); ++i) EXPECT_EQ(p[i].first_unit, p[i - 1].end_unit);
  EXPECT_THROW(partition_units(3, 4), std::invalid_argument);
  EXPECT_THROW(partition_units(3, 0), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::model
