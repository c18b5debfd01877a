// Training works end to end on the cpu backend: the classifier's loss falls over steps when run
// data-parallel and pipelined, and the MLP's loss falls too.
#include <gtest/gtest.h>

#include <numeric>

#include "exec_test_util.h"

namespace meshscope::exec {
namespace {

double mean(const std::vector<double>& v, size_t first, size_t count) {
  return std::accumulate(v.begin() + first, v.begin() + first + count, 0.0) / count;
}

TEST(ExecutorTraining, ClassifierLossDecreases) {
  model::WorkloadSpec spec;
  spec.kind = model::WorkloadKind::kClassifier;
  spec.batch = 64;
  spec.lr = 0.1f;
  const int steps = 20;
  const auto s = testing::make_schedule(schedule::Family::kOneFOneB, {2, 2, 1}, 4);
  const RunResult r = testing::run_cpu(s, spec, steps);
  ASSERT_EQ(r.losses.size(), static_cast<size_t>(steps));
  // Untrained: about ln(10) = 2.3 (cross-entropy of a near-uniform guess over 10 classes).
  EXPECT_GT(r.losses[0], 1.5);
  EXPECT_LT(mean(r.losses, steps - 5, 5), 0.5 * mean(r.losses, 0, 5));
}

TEST(ExecutorTraining, MlpLossDecreases) {
  model::WorkloadSpec spec;
  spec.layers = 4;
  spec.hidden = 32;
  spec.batch = 32;
  spec.lr = 0.2f;
  const int steps = 20;
  const auto s = testing::make_schedule(schedule::Family::kZbH1, {1, 2, 2}, 4);
  const RunResult r = testing::run_cpu(s, spec, steps);
  EXPECT_LT(mean(r.losses, steps - 5, 5), 0.7 * mean(r.losses, 0, 5));
}

}  // namespace
}  // namespace meshscope::exec
