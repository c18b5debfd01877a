#include "gui/app/predictor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

TEST(Predictor, SimulatesTheMeasuredConfigurationWithTheSimulator) {
  const auto p = make_predictor();
  ASSERT_TRUE(p);
  EXPECT_NE(std::find(p->schedules.begin(), p->schedules.end(), "zb-h1"), p->schedules.end());
  EXPECT_EQ(p->default_hardware, "cpu-local");
  traces::Timeline measured;
  measured.metadata = {{"schedule", "1f1b"},
                       {"mesh", "dp=1 pp=4 tp=1"},
                       {"microbatches", "8"},
                       {"model", "mlp L=8 h=256 batch=32"}};
  const WhatIfConfig c = config_from_metadata(measured, WhatIfConfig{});
  const traces::Timeline t = p->simulate(c);
  EXPECT_EQ(t.devices.size(), 4u);
  EXPECT_EQ(t.metadata.at("schedule"), "1f1b");
  EXPECT_EQ(t.metadata.at("microbatches"), "8");
  EXPECT_EQ(t.metadata.at("hardware"), "cpu-local");
  // More microbatches: the pipeline's fill and drain weigh less.
  WhatIfConfig more = c;
  more.microbatches = 32;
  EXPECT_LT(traces::analyze(p->simulate(more)).bubble_fraction, traces::analyze(t).bubble_fraction);
}

TEST(Predictor, UnknownScheduleOrModelIsAnErrorThatSaysWhat) {
  const auto p = make_predictor();
  if (!p) GTEST_SKIP() << "this build has no simulator (sim/predict)";
  WhatIfConfig c;
  c.schedule = "zigzag";
  try {
    p->simulate(c);
    FAIL() << "accepted schedule zigzag";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("zigzag"), std::string::npos);
  }
  c.schedule = "1f1b";
  c.model = "resnet50";
  EXPECT_THROW(p->simulate(c), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::gui
