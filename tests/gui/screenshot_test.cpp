// Renders the viewer offscreen (Xvfb + Mesa) and checks its pixels against the analysis: the
// bubble colour appears where a device is idle and nowhere it is busy.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gui/app/app.h"
#include "gui/app/headless.h"
#include "gui/view/activity.h"
#include "gui/view/synthetic.h"
#include "tests/gui/pixel_check.h"

namespace meshscope::gui {
namespace {

using pixels::count_color;
using pixels::idle_by_device;

bool have_display() {
  const char* d = std::getenv("DISPLAY");
  return d && *d;
}

traces::Timeline pipeline() {
  SyntheticOptions o;
  o.pp = 4;
  o.microbatches = 4;
  o.steps = 1;
  return make_synthetic_pipeline(o);
}

TEST(Screenshot, TimelineShowsBubblesExactlyWhereTheAnalysisSaysDevicesAreIdle) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  const traces::Timeline original = pipeline();
  const auto idle = idle_by_device(original);
  App app;
  app.session().add_run(make_run(original, "pipeline"));
  ScreenshotOptions o;
  o.width = 1400;
  o.height = 700;
  o.flows = false;  // arrows would cross the rows being checked
  const Image img = render_frames(app, o);
  ASSERT_EQ(img.width, 1400);
  ASSERT_EQ(img.height, 700);

  const TimelineView& view = app.timeline();
  const gui::Run& run = *app.session().runs[0];
  int idle_columns = 0, busy_columns = 0;
  for (uint16_t d = 0; d < original.devices.size(); ++d) {
    const size_t row = run.index->device_row_begin(d);  // the compute lane: where idle spans go
    const int top = static_cast<int>(view.screen_row_top(row)) + 4;
    const int bottom =
        static_cast<int>(view.screen_row_top(row) + view.layout().options().row_px) - 4;
    ASSERT_GT(bottom, top);
    for (int x = static_cast<int>(view.screen_x(run.begin_ns())) + 2;
         x < static_cast<int>(view.screen_x(run.end_ns())) - 2; ++x) {
      // The times this pixel column covers, two pixels of margin each side: box edges carry an
      // outline and anti-aliasing.
      const int64_t t0 = view.time_at_screen_x(static_cast<float>(x - 2));
      const int64_t t1 = view.time_at_screen_x(static_cast<float>(x + 3));
      const int bubble = count_color(img, x, top, x + 1, bottom, kBubbleColor);
      if (pixels::inside(idle[d], t0, t1)) {
        ++idle_columns;
        // At least a quarter: the bubble's length is written over it in white.
        EXPECT_GE(bubble * 4, bottom - top) << "device " << d << " idle at x=" << x;
      } else if (pixels::outside(idle[d], t0, t1)) {
        ++busy_columns;
        EXPECT_EQ(bubble, 0) << "device " << d << " busy at x=" << x;
      }
    }
  }
  // The check means something only if both kinds of columns were seen in numbers.
  EXPECT_GT(idle_columns, 200);
  EXPECT_GT(busy_columns, 1000);
}

TEST(Screenshot, MeshCellsShowTheBubbleForIdleDevicesOnly) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  const traces::Timeline original = pipeline();
  const auto idle = idle_by_device(original);
  int checked_idle = 0, checked_busy = 0;
  // Several instants through the step: in warm-up the later stages idle, in cool-down the earlier.
  for (double fraction : {0.05, 0.2, 0.5, 0.8, 0.95}) {
    App app;
    app.session().add_run(make_run(original, "pipeline"));
    ScreenshotOptions o;
    o.width = 1000;
    o.height = 600;
    o.view = ViewKind::kMesh;
    o.playhead = fraction;
    const Image img = render_frames(app, o);
    const int64_t t = app.session().playhead.t_ns();
    ASSERT_EQ(app.mesh().last_cells().size(), original.devices.size());
    for (const MeshCell& c : app.mesh().last_cells()) {
      // The cell's middle, away from the rounded corners and the name line.
      const int x0 = static_cast<int>(c.x + c.w * 0.1f), x1 = static_cast<int>(c.x + c.w * 0.9f);
      const int y0 = static_cast<int>(c.y + c.h * 0.3f), y1 = static_cast<int>(c.y + c.h * 0.9f);
      const int bubble = count_color(img, x0, y0, x1, y1, kBubbleColor);
      if (pixels::inside(idle[c.device], t - 1, t + 1)) {
        ++checked_idle;
        EXPECT_GT(bubble * 2, (x1 - x0) * (y1 - y0))
            << "device " << c.device << " idle at " << fraction;
      } else if (pixels::outside(idle[c.device], t - 1, t + 1)) {
        ++checked_busy;
        EXPECT_EQ(bubble, 0) << "device " << c.device << " busy at " << fraction;
      }
    }
  }
  EXPECT_GT(checked_idle, 2);
  EXPECT_GT(checked_busy, 2);
}

TEST(Screenshot, StatsAndCompareViewsRender) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  App app;
  app.session().add_run(make_run(pipeline(), "a"));
  SyntheticOptions slower;
  slower.pp = 4;
  slower.microbatches = 8;
  app.session().add_run(make_run(make_synthetic_pipeline(slower), "b"));
  for (ViewKind v : {ViewKind::kStats, ViewKind::kCompare}) {
    ScreenshotOptions o;
    o.width = 900;
    o.height = 600;
    o.view = v;
    const Image img = render_frames(app, o);
    EXPECT_EQ(app.view(), v);
    // Both draw bubble time in red: the stats bars' peer-wait part, the compare view's idle spans.
    EXPECT_GT(count_color(img, 0, 0, img.width, img.height, kBubbleColor), 100) << name(v);
  }
}

}  // namespace
}  // namespace meshscope::gui
