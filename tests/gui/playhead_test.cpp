#include "gui/view/playhead.h"

#include <gtest/gtest.h>

namespace meshscope::gui {
namespace {

TEST(Playhead, AdvancesAtTheChosenSpeedOnlyWhilePlaying) {
  Playhead p;
  p.set_range(1000, 11'000);
  p.set_duration_s(4);  // 10 us of trace in 4 s
  p.advance(1);
  EXPECT_EQ(p.t_ns(), 1000);
  p.play();
  p.advance(1);
  EXPECT_EQ(p.t_ns(), 3500);
  EXPECT_DOUBLE_EQ(p.fraction(), 0.25);
  p.pause();
  p.advance(1);
  EXPECT_EQ(p.t_ns(), 3500);
}

TEST(Playhead, StopsAtTheEndOrLoops) {
  Playhead p;
  p.set_range(0, 100);
  p.set_duration_s(1);
  p.play();
  p.advance(1.5);
  EXPECT_EQ(p.t_ns(), 100);
  EXPECT_FALSE(p.playing());
  p.play();  // from the end: starts over
  EXPECT_EQ(p.t_ns(), 0);
  p.set_loop(true);
  p.advance(1.25);
  EXPECT_EQ(p.t_ns(), 25);
  EXPECT_TRUE(p.playing());
}

TEST(Playhead, SeekClampsIntoTheRangeAndBadSpeedsAreIgnored) {
  Playhead p;
  p.set_range(0, 100);
  p.seek(250);
  EXPECT_EQ(p.t_ns(), 100);
  p.seek(-5);
  EXPECT_EQ(p.t_ns(), 0);
  p.set_duration_s(2);
  p.set_duration_s(0);
  p.set_duration_s(-1);
  EXPECT_DOUBLE_EQ(p.duration_s(), 2);
}

TEST(Playhead, StaysExactOnEpochClocks) {
  const int64_t base = 1'700'000'000'000'000'000;
  Playhead p;
  p.set_range(base, base + 1000);
  p.set_duration_s(1000);
  p.play();
  p.advance(1);
  EXPECT_EQ(p.t_ns(), base + 1);
  p.seek_fraction(0.5);
  EXPECT_EQ(p.t_ns(), base + 500);
}

TEST(Playhead, EmptyRangeNeverPlays) {
  Playhead p;
  p.set_range(50, 50);
  p.play();
  EXPECT_FALSE(p.playing());
}

}  // namespace
}  // namespace meshscope::gui
