// Seeded initial weights and their tensor-parallel shards; synthetic teacher data.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "sim/model/data.h"
#include "sim/model/weights.h"

namespace meshscope::model {
namespace {

Workload mlp(uint64_t seed) {
  WorkloadSpec spec;
  spec.layers = 3;
  spec.hidden = 8;
  spec.batch = 6;
  spec.seed = seed;
  return make_workload(spec);
}

TEST(ModelWeights, DeterministicPerSeedAndPerLayer) {
  const auto a = init_weights(mlp(1)), b = init_weights(mlp(1)), c = init_weights(mlp(2));
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].w, b[0].w);
  EXPECT_EQ(a[5].b, b[5].b);
  EXPECT_NE(a[0].w, c[0].w);
  EXPECT_NE(a[0].w, a[2].w);  // two layers of the same shape differ
  EXPECT_EQ(a[1].w.size(), 32u * 8u);
  // Layer i does not depend on how many layers follow it.
  WorkloadSpec deeper = mlp(1).spec;
  deeper.layers = 7;
  EXPECT_EQ(init_weights(make_workload(deeper))[2].w, a[2].w);
}

TEST(ModelWeights, ShardsAreSlicesOfTheFullMatrixAndUnshardRestoresIt) {
  const auto full = init_weights(mlp(3));
  const LinearWeights& fc1 = full[0];  // 8 x 32, column split
  const LinearWeights& fc2 = full[1];  // 32 x 8, row split
  const LinearWeights c1 = shard(fc1, TpSplit::kColumn, 1, 4);
  ASSERT_EQ(c1.w.size(), 8u * 8u);
  EXPECT_EQ(c1.w[2 * 8 + 3], fc1.w[2 * 32 + 8 + 3]);  // row 2, column 8 + 3
  EXPECT_EQ(c1.b[0], fc1.b[8]);
  const LinearWeights r2 = shard(fc2, TpSplit::kRow, 2, 4);
  ASSERT_EQ(r2.w.size(), 8u * 8u);
  EXPECT_EQ(r2.w[0], fc2.w[16 * 8]);  // row 16
  EXPECT_EQ(r2.b, fc2.b);             // row-parallel bias is not split
  for (TpSplit split : {TpSplit::kColumn, TpSplit::kRow}) {
    const LinearWeights& src = split == TpSplit::kColumn ? fc1 : fc2;
    LinearWeights rebuilt = src;
    std::fill(rebuilt.w.begin(), rebuilt.w.end(), 0.0f);
    std::fill(rebuilt.b.begin(), rebuilt.b.end(), 0.0f);
    for (int t = 0; t < 4; ++t) unshard(shard(src, split, t, 4), split, t, 4, rebuilt);
    EXPECT_EQ(rebuilt.w, src.w);
    EXPECT_EQ(rebuilt.b, src.b);
  }
}

TEST(ModelData, BatchesAreDeterministicPerStepWithTeacherTargets) {
  const Workload w = mlp(5);
  const Batch a = make_batch(w, 0), b = make_batch(w, 0), c = make_batch(w, 1);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.inputs, c.inputs);
  ASSERT_EQ(a.inputs.size(), 6u * 8u);
  ASSERT_EQ(a.targets.size(), 6u * 8u);
  for (float t : a.targets) EXPECT_LT(std::abs(t), 1.0f);  // tanh of the teacher's output

  WorkloadSpec chain;
  chain.kind = WorkloadKind::kChain;
  chain.batch = 5;
  const Batch cb = make_batch(make_workload(chain), 3);
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(cb.targets[i], 3 * cb.inputs[i] - 1);
}

TEST(ModelData, ClassifierLabelsAreInRangeAndUseManyClasses) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kClassifier;
  spec.batch = 256;
  const Batch b = make_batch(make_workload(spec), 0);
  ASSERT_EQ(b.labels.size(), 256u);
  ASSERT_EQ(b.inputs.size(), 256u * 784u);
  std::set<int> seen(b.labels.begin(), b.labels.end());
  for (int l : seen) {
    EXPECT_GE(l, 0);
    EXPECT_LT(l, 10);
  }
  EXPECT_GE(seen.size(), 8u);  // a random teacher spreads samples over the classes
}

}  // namespace
}  // namespace meshscope::model
