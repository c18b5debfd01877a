#include "sim/model/vgg.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace meshscope::model {
namespace {

TEST(Vgg, Vgg16HasItsPublishedSize) {
  const VggModel v = build_vgg(VggSpec{}, 1, 1, 4);
  // Simonyan & Zisserman 2015, configuration D: 138,357,544 parameters; 15.5 G multiply-adds.
  EXPECT_EQ(v.total_parameters, 138357544);
  EXPECT_NEAR(v.model_flops_per_microbatch / 3 / 2 / 1e9, 15.47, 0.05);
}

TEST(Vgg, StagesAreContiguousAndBalanced) {
  const VggModel one = build_vgg(VggSpec{}, 8, 1, 2);
  const VggModel four = build_vgg(VggSpec{}, 8, 4, 2);
  ASSERT_EQ(four.stages.size(), 4u);
  double total = 0, lo = 1e300, hi = 0;
  for (const StageCost& s : four.stages) {
    total += s.forward_flops();
    lo = std::min(lo, s.forward_flops());
    hi = std::max(hi, s.forward_flops());
  }
  EXPECT_NEAR(total, one.stages[0].forward_flops(), 1);
  EXPECT_LT(hi / lo, 2.0);
  for (size_t s = 1; s < four.stages.size(); ++s)
    EXPECT_EQ(four.stages[s].input_bytes, four.stages[s - 1].output_bytes);
  EXPECT_THROW(build_vgg(VggSpec{}, 1, 40, 2), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::model
