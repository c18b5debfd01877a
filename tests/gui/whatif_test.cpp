#include "gui/view/whatif.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

TEST(WhatIf, ConfigComesFromTheMeasuredRunsDescriptor) {
  traces::Timeline t;
  t.run.mesh = {2, 4, 1};
  t.run.family = "gpipe";
  t.run.microbatches = 8;
  t.run.workload = {.kind = traces::ModelKind::kMlp, .layers = 8, .hidden = 512, .batch = 64};
  // The display strings say something else: the configuration must not read them.
  t.metadata = {{"schedule", "1f1b"}, {"mesh", "dp=9 pp=9 tp=9"}, {"model", "mlp L=1 h=1"}};
  const WhatIfConfig c = config_from_run(t, WhatIfConfig{});
  EXPECT_EQ(c.schedule, "gpipe");
  EXPECT_EQ(c.dp, 2);
  EXPECT_EQ(c.pp, 4);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.microbatches, 8);
  EXPECT_EQ(c.workload, t.run.workload);
  EXPECT_EQ(describe(c.workload), "mlp L=8 h=512 batch=64");
  EXPECT_EQ(c.micro_batch, 4);  // 64 samples over dp 2 x 8 microbatches
  EXPECT_EQ(describe(c), "gpipe dp=2 pp=4 tp=1 m=8 mb=4");
  EXPECT_EQ(c.precision, "");  // not a cpu run: the predictor's default
}

// meshscope's cpu backend computes in fp32: its runs are predicted in fp32, others keep the
// predictor's default.
TEST(WhatIf, ACpuRunIsPredictedInTheFormatItComputedIn) {
  traces::Timeline t;
  t.run.source = traces::RunSource::kCpu;
  t.run.mesh = {1, 2, 1};
  t.run.family = "1f1b";
  t.run.microbatches = 4;
  const WhatIfConfig c = config_from_run(t, WhatIfConfig{});
  EXPECT_EQ(c.precision, "fp32");
  EXPECT_EQ(describe(c), "1f1b dp=1 pp=2 tp=1 m=4 fp32");
  t.run.source = traces::RunSource::kSim;
  EXPECT_EQ(config_from_run(t, WhatIfConfig{}).precision, "");
}

// Every family that splits a rank's stage into chunks says how many: the panel's choice where it
// is one, the family's own where it is fixed (the label had said it for "interleaved" alone).
TEST(WhatIf, TheLabelSaysTheChunksOfEveryFamilyThatSplitsAStage) {
  WhatIfConfig c;
  c.pp = 4;
  c.microbatches = 8;
  c.virtual_stages = 3;
  c.schedule = "interleaved";
  EXPECT_EQ(describe(c), "interleaved dp=1 pp=4 tp=1 m=8 v=3");
  c.schedule = "interleaved-zb";
  EXPECT_EQ(describe(c), "interleaved-zb dp=1 pp=4 tp=1 m=8 v=3");
  c.schedule = "zb-v";
  EXPECT_EQ(describe(c), "zb-v dp=1 pp=4 tp=1 m=8 v=2");
  c.schedule = "1f1b";
  EXPECT_EQ(describe(c), "1f1b dp=1 pp=4 tp=1 m=8");
}

TEST(WhatIf, WhatTheRunDoesNotKnowKeepsTheDefaults) {
  traces::Timeline t;
  t.run.mesh = {0, 3, 0};  // partly known: not a mesh
  t.metadata = {{"mesh", "dp=2 pp=2"}, {"microbatches", "3"}};
  WhatIfConfig d;
  d.pp = 6;
  const WhatIfConfig c = config_from_run(t, d);
  EXPECT_EQ(c, d);
}

TEST(WhatIf, ScalingValuesArePowersOfTwoAndIncludeTheConfiguration) {
  WhatIfConfig c;
  c.microbatches = 12;
  EXPECT_EQ(scaling_values(ScalingAxis::kMicrobatches, c),
            (std::vector<int>{1, 2, 4, 8, 12, 16, 32, 64}));
  c.dp = 3;
  EXPECT_EQ(scaling_values(ScalingAxis::kDataParallel, c), (std::vector<int>{1, 2, 3, 4, 8, 16}));
  EXPECT_EQ(with_value(c, ScalingAxis::kPipeline, 8).pp, 8);
}

// A predictor made of the synthetic 1F1B generator: the sweep must see its bubble shrink as
// microbatches grow, and carry a rejected point's message without stopping.
TEST(WhatIf, SweepRunsThePredictorAtEachPointAndKeepsErrors) {
  Predictor p;
  p.simulate = [](const WhatIfConfig& c) {
    if (c.microbatches > 16) throw std::invalid_argument("too many microbatches");
    SyntheticOptions o;
    o.pp = c.pp;
    o.microbatches = c.microbatches;
    o.jitter = 0;
    return make_synthetic_pipeline(o);
  };
  WhatIfConfig c;
  c.pp = 4;
  const auto points = sweep(p, c, ScalingAxis::kMicrobatches);
  ASSERT_EQ(points.size(), 7u);
  for (size_t i = 1; i < 5; ++i) {
    EXPECT_LT(points[i].bubble_fraction, points[i - 1].bubble_fraction) << points[i].x;
    EXPECT_GT(points[i].throughput, points[i - 1].throughput) << points[i].x;
  }
  EXPECT_DOUBLE_EQ(points[0].throughput, 1.0);
  EXPECT_EQ(points[5].error, "too many microbatches");
  EXPECT_EQ(points[6].step_ns, 0);
}

}  // namespace
}  // namespace meshscope::gui
