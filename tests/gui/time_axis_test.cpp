#include "gui/view/time_axis.h"

#include <gtest/gtest.h>

#include <cmath>

namespace meshscope::gui {
namespace {

TimeAxis axis_over(int64_t begin, int64_t end, double width) {
  TimeAxis a;
  a.set_width_px(width);
  a.set_bounds(begin, end);
  return a;
}

TEST(TimeAxis, FitShowsTheWholeExtentAcrossTheWidth) {
  const TimeAxis a = axis_over(1000, 11000, 500);
  EXPECT_EQ(a.begin_ns(), 1000);
  EXPECT_EQ(a.end_ns(), 11000);
  EXPECT_DOUBLE_EQ(a.x_of(1000), 0);
  EXPECT_DOUBLE_EQ(a.x_of(11000), 500);
  EXPECT_EQ(a.t_of(250), 6000);
}

TEST(TimeAxis, ZoomAtCursorKeepsTheTimeUnderTheCursor) {
  TimeAxis a = axis_over(0, 1'000'000, 1000);
  const double x = 730;
  const double t_before = a.rel_of(x);
  a.zoom_at(x, 8);
  EXPECT_NEAR(a.rel_of(x), t_before, 1e-6);
  EXPECT_NEAR(a.range_ns(), 1'000'000 / 8.0, 1e-6);
  a.zoom_at(x, 1 / 8.0);
  EXPECT_NEAR(a.begin_rel_ns(), 0, 1e-6);
  EXPECT_NEAR(a.range_ns(), 1'000'000, 1e-6);
}

TEST(TimeAxis, ZoomStopsAtTheNarrowestRangeAndTheCursorStaysPut) {
  TimeAxis a = axis_over(0, 1'000'000, 1000);
  const double t_before = a.rel_of(400);
  a.zoom_at(400, 1e12);
  EXPECT_NEAR(a.range_ns(), TimeAxis::kMinRangeNs, 1e-9);
  EXPECT_NEAR(a.rel_of(400), t_before, 1e-6);
}

TEST(TimeAxis, ZoomOutIsLimitedSoTheDataNeverShrinksToNothing) {
  TimeAxis a = axis_over(0, 1'000'000, 1000);
  a.zoom_at(500, 1e-9);
  EXPECT_NEAR(a.range_ns(), 1'500'000, 1e-6);
}

TEST(TimeAxis, PanMovesByPixelsTimesScaleAndKeepsTheCentreInsideTheData) {
  TimeAxis a = axis_over(0, 1'000'000, 1000);
  a.zoom_at(0, 10);  // [0, 100000), 100 ns per px
  a.pan_px(-50);     // drag left: later times come in
  EXPECT_NEAR(a.begin_rel_ns(), 5000, 1e-6);
  a.pan_px(-1e9);
  EXPECT_NEAR(a.begin_rel_ns() + a.range_ns() / 2, 1'000'000, 1e-6);
  a.pan_px(1e9);
  EXPECT_NEAR(a.begin_rel_ns() + a.range_ns() / 2, 0, 1e-6);
}

TEST(TimeAxis, ShowZoomsToASelectionInEitherOrder) {
  TimeAxis a = axis_over(0, 1'000'000, 800);
  a.show(300'000, 200'000);
  EXPECT_EQ(a.begin_ns(), 200'000);
  EXPECT_EQ(a.end_ns(), 300'000);
  EXPECT_NEAR(a.x_of(250'000), 400, 1e-9);
}

TEST(TimeAxis, KeepsNanosecondPrecisionOnEpochTimestamps) {
  const int64_t base = 1'700'000'000'000'000'000;  // 2023 in ns since the epoch
  TimeAxis a = axis_over(base, base + 1'000'000, 1000);
  a.show(base + 500'000, base + 500'100);
  EXPECT_NEAR(a.x_of(base + 500'050), 500, 1e-6);
  EXPECT_NEAR(a.x_of(base + 500'051) - a.x_of(base + 500'050), 10, 1e-6);
  EXPECT_EQ(a.t_of(500), base + 500'050);
  EXPECT_EQ(a.begin_ns(), base + 500'000);
}

TEST(TimeAxis, ShiftedAxisDrawsTheOtherClockAtTheSamePixels) {
  TimeAxis a = axis_over(1000, 2000, 100);
  const TimeAxis b = a.shifted(5000);
  EXPECT_DOUBLE_EQ(b.x_of(6500), a.x_of(1500));
}

TEST(RulerTicks, StepIsOneTwoOrFiveTimesAPowerOfTenAndWideEnough) {
  for (double range : {997.0, 12'345.0, 3.3e6, 7.7e9}) {
    TimeAxis a = axis_over(0, static_cast<int64_t>(range), 1000);
    const RulerTicks t = ruler_ticks(a, 80);
    EXPECT_GE(static_cast<double>(t.step_ns) / a.ns_per_px(), 80) << range;
    EXPECT_LT(static_cast<double>(t.step_ns) / a.ns_per_px(), 80 * 2.5 + 1e-9) << range;
    int64_t s = t.step_ns;
    while (s % 10 == 0) s /= 10;
    EXPECT_TRUE(s == 1 || s == 2 || s == 5) << t.step_ns;
    ASSERT_FALSE(t.rel_ns.empty());
    for (double x : t.rel_ns) {
      EXPECT_GE(x, a.begin_rel_ns());
      EXPECT_LE(x, a.end_rel_ns());
      EXPECT_NEAR(std::fmod(x, static_cast<double>(t.step_ns)), 0, 1e-6);
    }
  }
}

TEST(RulerTicks, LabelsUseAUnitThatShowsTheStep) {
  EXPECT_EQ(format_ruler_label(0, 500), "0");
  EXPECT_EQ(format_ruler_label(150, 50), "150 ns");
  EXPECT_EQ(format_ruler_label(1500, 500), "1.5 \xC2\xB5s");
  EXPECT_EQ(format_ruler_label(12'500'000, 500'000), "12.5 ms");
  EXPECT_EQ(format_ruler_label(4'000, 2'000), "4 \xC2\xB5s");
  EXPECT_EQ(format_ruler_label(2.5e9, 1e8), "2.5 s");
}

}  // namespace
}  // namespace meshscope::gui
