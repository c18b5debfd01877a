#include "traces/analysis_intervals.h"

#include <gtest/gtest.h>

namespace meshscope::traces {
namespace {

TEST(MergeIntervals, JoinsOverlappingNestedAndTouchingDropsEmpty) {
  const IntervalSet s =
      merge_intervals({{50, 60}, {0, 10}, {5, 20}, {20, 30}, {7, 8}, {40, 40}, {45, 44}, {55, 70}});
  EXPECT_EQ(s, (IntervalSet{{0, 30}, {50, 70}}));
  EXPECT_EQ(total_length(s), 50);
  EXPECT_TRUE(merge_intervals({}).empty());
}

TEST(Intersect, KeepsOnlyCommonTime) {
  const IntervalSet a{{0, 10}, {20, 30}, {40, 50}};
  const IntervalSet b{{5, 25}, {28, 45}};
  EXPECT_EQ(intersect(a, b), (IntervalSet{{5, 10}, {20, 25}, {28, 30}, {40, 45}}));
  EXPECT_EQ(intersect(a, {}), IntervalSet{});
  // Touching is not overlapping: half-open intervals.
  EXPECT_EQ(intersect(IntervalSet{{0, 10}}, IntervalSet{{10, 20}}), IntervalSet{});
}

TEST(LengthWithin, ClipsIntervalsCrossingTheWindow) {
  const IntervalSet s{{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(length_within(s, {5, 45}), 5 + 10 + 5);
  EXPECT_EQ(length_within(s, {10, 20}), 0);
  EXPECT_EQ(length_within(s, {-100, 100}), 30);
  EXPECT_EQ(length_within(s, {25, 26}), 1);
  EXPECT_EQ(length_within(s, {60, 70}), 0);
}

TEST(GapsWithin, IsTheWindowMinusTheSet) {
  const IntervalSet s{{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(gaps_within(s, {5, 45}), (IntervalSet{{10, 20}, {30, 40}}));
  EXPECT_EQ(gaps_within(s, {-5, 55}), (IntervalSet{{-5, 0}, {10, 20}, {30, 40}, {50, 55}}));
  EXPECT_EQ(gaps_within(s, {22, 28}), IntervalSet{});
  EXPECT_EQ(gaps_within({}, {3, 9}), (IntervalSet{{3, 9}}));
  EXPECT_EQ(gaps_within(s, {9, 9}), IntervalSet{});
}

}  // namespace
}  // namespace meshscope::traces
