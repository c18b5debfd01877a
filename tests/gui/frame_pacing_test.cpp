// The viewer's frame pacing: it draws while something moves and for a few frames after input,
// and otherwise sleeps instead of redrawing an unchanged window.
#include "gui/view/frame_pacing.h"

#include <gtest/gtest.h>

namespace meshscope::gui {
namespace {

// Drains the first frames (the window must be drawn once) and returns the pacing idle.
FramePacing idle_pacing() {
  FramePacing p;
  while (p.should_draw(false, false)) {
  }
  return p;
}

TEST(FramePacing, AnIdleWindowSleepsAndDrawsNothing) {
  FramePacing p = idle_pacing();
  for (int i = 0; i < 100; ++i) {
    EXPECT_GT(p.wait_s(false), 0.0);
    EXPECT_FALSE(p.should_draw(false, false)) << "frame " << i;
  }
}

TEST(FramePacing, TheFirstFramesDrawTheWindow) {
  FramePacing p;
  EXPECT_EQ(p.wait_s(false), 0.0);
  EXPECT_TRUE(p.should_draw(false, false));
}

TEST(FramePacing, InputDrawsAFewFramesThenSleepsAgain) {
  FramePacing p = idle_pacing();
  EXPECT_TRUE(p.should_draw(true, false));
  int drawn = 1;
  while (p.wait_s(false) == 0.0) {
    ASSERT_TRUE(p.should_draw(false, false));
    ++drawn;
  }
  EXPECT_EQ(drawn, FramePacing::kSettleFrames);
  EXPECT_FALSE(p.should_draw(false, false));
}

TEST(FramePacing, PlaybackOrABackgroundJobDrawsEveryFrameWithoutWaiting) {
  FramePacing p = idle_pacing();
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(p.wait_s(true), 0.0);
    EXPECT_TRUE(p.should_draw(false, true));
  }
  // Playback stopped: a few settle frames at most, then sleep.
  int drawn = 0;
  while (p.should_draw(false, false)) ++drawn;
  EXPECT_LE(drawn, FramePacing::kSettleFrames);
  EXPECT_GT(p.wait_s(false), 0.0);
}

}  // namespace
}  // namespace meshscope::gui
