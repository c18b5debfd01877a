// Stage costs of the executable workloads, checked against hand-derived numbers for a small MLP
// with tensor parallelism, and the seed chain.
#include <gtest/gtest.h>

#include "sim/model/workload_cost.h"
#include "tests/sim/moe_spec.h"

namespace meshscope::model {
namespace {

TEST(ModelWorkloadCost, MlpStageWithTensorParallelism) {
  WorkloadSpec spec;
  spec.layers = 2;
  spec.hidden = 16;
  spec.batch = 8;
  const Workload w = make_workload(spec);
  const int rows = 4, tp = 2;
  const auto c = stage_costs(w, partition_units(2, 2), tp, rows);
  ASSERT_EQ(c.size(), 2u);
  // fc1: 16 -> 64 split over 2 (local 16 x 32); fc2: 64 -> 16 split by rows (local 32 x 16).
  const double gemm = 2.0 * rows * 32 * 16;  // both GEMMs of a block have this size locally
  EXPECT_DOUBLE_EQ(c[1].forward[0].flops, gemm);
  EXPECT_EQ(c[1].forward[0].m, rows);
  EXPECT_EQ(c[1].forward[0].n, 32);
  EXPECT_EQ(c[1].forward[0].k, 16);
  EXPECT_EQ(c[1].parameters, (16 * 32 + 32) + (32 * 16 + 16));
  // Megatron: one all-reduce of the block output forward, one of the input gradient backward...
  ASSERT_EQ(c[1].tp_forward.size(), 1u);
  EXPECT_EQ(c[1].tp_forward[0].bytes, 4 * rows * 16);
  ASSERT_EQ(c[1].tp_backward.size(), 1u);
  EXPECT_EQ(c[1].tp_backward[0].bytes, 4 * rows * 16);
  // ...except on stage 0, which computes no gradient for the data.
  EXPECT_TRUE(c[0].tp_backward.empty());
  EXPECT_DOUBLE_EQ(c[1].input_grad_flops() - c[0].input_grad_flops(), gemm);
  EXPECT_DOUBLE_EQ(c[0].weight_grad_flops(), c[1].weight_grad_flops());
  // Traffic and memory: the block's input and output are h wide.
  EXPECT_EQ(c[0].input_bytes, 0);
  EXPECT_EQ(c[0].output_bytes, 4 * rows * 16);
  EXPECT_EQ(c[1].input_bytes, 4 * rows * 16);
  EXPECT_EQ(c[1].output_bytes, 0);
  // input + fc1 pre-activation and activation + fc2 output + residual output (+ loss gradient).
  const int64_t act = 4 * rows * (16 + 2 * 32 + 16 + 16);
  EXPECT_EQ(c[0].activation_bytes, act);
  EXPECT_EQ(c[1].activation_bytes, act + 4 * rows * 16);
  EXPECT_EQ(c[0].weight_grad_bytes, 4 * rows * (16 + 32));  // inputs of fc1 and fc2

  spec.data_gradient = true;
  const auto eq = stage_costs(make_workload(spec), partition_units(2, 2), tp, rows);
  EXPECT_DOUBLE_EQ(eq[0].input_grad_flops(), eq[1].input_grad_flops());
}

TEST(ModelWorkloadCost, MoeBlockWithExpertParallelism) {
  WorkloadSpec spec = testing::small_moe_spec(2, 32, 2, 1.0);  // 2 blocks, batch 32, top-2
  const int rows = 8, C = 4;                                   // ceil(1 x 8 x 2 / 4)
  ASSERT_EQ(expert_capacity(spec, rows), C);
  const int64_t expert = 8 * 32 + 32 + 32 * 8 + 8, router = 8 * 4 + 4;
  for (const int ep : {1, 2, 4}) {
    spec.ep = ep;
    const auto c = stage_costs(make_workload(spec), partition_units(2, 1), 1, rows);
    ASSERT_EQ(c.size(), 1u);
    // Each rank holds the routers and experts / ep experts, whose gradients dp does not reduce.
    EXPECT_EQ(c[0].parameters, 2 * (router + 4 / ep * expert));
    EXPECT_EQ(c[0].expert_parameters, 2 * 4 / ep * expert);
    EXPECT_EQ(dp_reduced_parameters(c[0], ep), ep > 1 ? 2 * router : c[0].parameters);
    // Dispatch and combine forward, their gradients backward: one all-to-all of the experts x
    // capacity x h buffer each, on the ep axis; none without expert parallelism.
    const size_t a2a = ep > 1 ? 2 * 2 : 0;
    ASSERT_EQ(c[0].tp_forward.size(), a2a);
    ASSERT_EQ(c[0].tp_backward.size(), a2a);
    for (const auto* list : {&c[0].tp_forward, &c[0].tp_backward}) {
      for (const TpCollective& t : *list) {
        EXPECT_EQ(t.op, CommOp::kAllToAll);
        EXPECT_EQ(t.axis, CommAxis::kEp);
        EXPECT_EQ(t.bytes, 4 * 4 * C * 8);
      }
    }
    // The experts' GEMMs: experts x capacity rows per block in all, whatever the ep.
    double expert_flops = 0;
    for (const OpCost& op : c[0].forward)
      if (op.name.find(".expert.fc") != std::string::npos && op.kind == OpKind::kGemm) {
        EXPECT_EQ(op.m, C);
        expert_flops += op.flops;
      }
    EXPECT_DOUBLE_EQ(expert_flops, 2 * (4.0 * C) * 2 * (2.0 * 8 * 32));
  }
}

TEST(ModelWorkloadCost, ChainOneStagePerLayer) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kChain;
  spec.batch = 6;
  const auto c = stage_costs(make_workload(spec), partition_units(3, 3), 1, 2);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].output_bytes, 4 * 2 * 2);  // 2 rows x 2 features
  EXPECT_EQ(c[1].output_bytes, 4 * 2 * 3);
  EXPECT_EQ(c[2].input_bytes, 4 * 2 * 3);
  EXPECT_DOUBLE_EQ(c[1].forward_flops() - c[1].forward[1].flops, 2.0 * 2 * 3 * 2);
  EXPECT_EQ(c[2].forward.back().kind, OpKind::kLoss);
  EXPECT_THROW(stage_costs(make_workload(spec), partition_units(3, 3), 1, 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::model

namespace meshscope::model {
namespace {

TEST(ModelWorkloadCost, RunLevelCostsSplitTheBatchOverDpAndMicrobatches) {
  WorkloadSpec spec;
  spec.layers = 4;
  spec.hidden = 8;
  spec.batch = 24;
  const auto c = workload_stage_costs(spec, /*dp=*/2, /*tp=*/1, /*num_stages=*/2, /*mbs=*/3);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].output_bytes, 4 * 4 * 8);  // 24 / (2 * 3) = 4 rows of 8 floats
  EXPECT_EQ(c[0].parameters, 2 * (8 * 32 + 32 + 32 * 8 + 8));
  EXPECT_EQ(microbatch_rows(24, 2, 3), 4);
  EXPECT_THROW(workload_stage_costs(spec, 2, 1, 2, 5), std::invalid_argument);  // 24 / 10
  EXPECT_THROW(workload_stage_costs(spec, 1, 1, 5, 1), std::invalid_argument);  // 5 > 4 layers
}

}  // namespace
}  // namespace meshscope::model
