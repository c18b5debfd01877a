// Renders the viewer offscreen (Xvfb + Mesa) and checks its pixels against the analysis: the
// bubble colour appears where a device is idle and nowhere it is busy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "gui/app/app.h"
#include "gui/app/headless.h"
#include "gui/app/predictor.h"
#include "gui/app/track_painter.h"
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

// Rank 0 of a real Kineto trace of a 2-rank A100 NCCL run, added to `app`'s session.
void add_kineto_trace(App& app) {
  app.session().add_run(load_run(std::string(MESHSCOPE_SOURCE_DIR) +
                                 "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz"));
}

// Options of a width x height frame; without flow arrows when `flows` is false.
ScreenshotOptions sized(int width, int height, bool flows = true) {
  ScreenshotOptions o;
  o.width = width;
  o.height = height;
  o.flows = flows;
  return o;
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
  const ScreenshotOptions o = sized(1400, 700, false);  // arrows would cross the rows checked
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

// A real Kineto trace at Fit (rank 0 of a 2-rank A100 NCCL run): the GPU's kernel row folds into
// boxes of thousands of kernels. Drawn as solid grey they made a 76%-idle GPU look busy; now the
// row's busy-coloured area is its busy share of the time in view, within a few points.
TEST(Screenshot, FoldedBoxesOfAnImportedGpuRowShowItsBusyShare) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  App app;
  add_kineto_trace(app);
  const ScreenshotOptions o = sized(1280, 720, false);
  const Image img = render_frames(app, o);
  const TimelineView& view = app.timeline();
  const gui::Run& run = *app.session().runs[0];
  const traces::Timeline& t = run.timeline;
  uint16_t gpu = 0;
  while (traces::is_host_only(t.devices[gpu])) ++gpu;
  const size_t r = run.index->device_row_begin(gpu);  // the kernel stream's first band
  const Row& row = run.index->rows()[r];
  const int x0 = static_cast<int>(std::ceil(view.screen_x(run.begin_ns())));
  const int x1 = std::min(img.width - 8, static_cast<int>(view.screen_x(run.end_ns())));
  const int64_t t0 = view.time_at_screen_x(static_cast<float>(x0));
  const int64_t t1 = view.time_at_screen_x(static_cast<float>(x1));
  // The row's busy time in [t0, t1), from its spans: everything but idle.
  int64_t busy = 0;
  size_t folded_spans = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    const traces::Span& s = t.spans[row.span_at(i)];
    if (s.kind == traces::SpanKind::kIdle) continue;
    busy += std::max<int64_t>(0, std::min(s.end_ns, t1) - std::max(s.begin_ns, t0));
    folded_spans += s.duration_ns() < 3 * (t1 - t0) / (x1 - x0);
  }
  ASSERT_GT(folded_spans, 1000u);  // the case in question: mostly folded
  const double expected = static_cast<double>(busy) / static_cast<double>(t1 - t0);
  // Box area: 2 px inset top and bottom (track_painter). Busy ink: anything that is neither the
  // row's background, nor red (idle), nor white (count labels).
  const int top = static_cast<int>(view.screen_row_top(r)) + 2;
  const int bottom = static_cast<int>(view.screen_row_top(r) + view.layout().options().row_px) - 2;
  int ink = 0, area = 0;
  for (int y = top; y < bottom; ++y) {
    for (int x = x0; x < x1; ++x) {
      const uint32_t p = img.pixel(x, y);
      const int R = p & 0xff, G = (p >> 8) & 0xff, B = (p >> 16) & 0xff;
      const bool background = R < 45 && G < 45 && B < 45;
      const bool red = R > G + 40 && R > B + 40;
      const bool white = R > 200 && G > 200 && B > 200;
      ink += !background && !red && !white;
      ++area;
    }
  }
  const double shown = static_cast<double>(ink) / area;
  EXPECT_NEAR(shown, expected, 0.06) << "busy share " << expected << ", drawn " << shown;
  EXPECT_LT(expected, 0.5);  // the trace's GPU is mostly idle: the check has teeth
}

// The critical-path toggle on the same trace: off, no magenta anywhere; on, every span of the path
// that lies in a shown row is outlined where it starts (traces::critical_paths decides the path).
TEST(Screenshot, CriticalPathToggleOutlinesThePathsSpans) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  App app;
  add_kineto_trace(app);
  ScreenshotOptions o = sized(1280, 720, false);
  const uint32_t magenta = kCriticalColor;
  const Image off = render_frames(app, o);
  EXPECT_EQ(count_color(off, 0, 0, off.width, off.height, magenta), 0);
  o.critical_path = true;
  const Image on = render_frames(app, o);
  EXPECT_GT(count_color(on, 0, 0, on.width, on.height, magenta), 200);
  const TimelineView& view = app.timeline();
  const gui::Run& run = *app.session().runs[0];
  ASSERT_FALSE(view.critical_paths().empty());
  // The path's longest span on the GPU (the host rows start collapsed), zoomed to so it is wide.
  std::optional<uint32_t> longest;
  for (const traces::CriticalPath& p : view.critical_paths()) {
    for (const traces::PathStep& st : p.steps) {
      const traces::Span& s = run.timeline.spans[st.span];
      if (!view.layout().row_shown(run.index->row_of(st.span))) continue;
      if (!longest || s.duration_ns() > run.timeline.spans[*longest].duration_ns())
        longest = st.span;
    }
  }
  ASSERT_TRUE(longest) << "no path span on the GPU";
  const traces::Span& s = run.timeline.spans[*longest];
  const double len = static_cast<double>(run.end_ns() - run.begin_ns());
  const double from = static_cast<double>(s.begin_ns - run.begin_ns()) / len;
  const double to = static_cast<double>(s.end_ns - run.begin_ns()) / len;
  o.range = std::pair{std::max(0.0, from - (to - from)), std::min(1.0, to + (to - from))};
  const Image zoomed = render_frames(app, o);
  const size_t r = run.index->row_of(*longest);
  const int top = static_cast<int>(view.screen_row_top(r));
  const int bottom = top + static_cast<int>(view.layout().options().row_px);
  const int x = static_cast<int>(view.screen_x(s.begin_ns));
  const int x_end = static_cast<int>(view.screen_x(s.end_ns));
  ASSERT_GT(x_end - x, 20);
  EXPECT_GT(count_color(zoomed, x - 1, top, x + 2, bottom, magenta), 4)
      << "no outline at the begin of " << run.timeline.span_name(s);
  EXPECT_GT(count_color(zoomed, x + 3, top, x_end - 3, top + 3, magenta), (x_end - x) / 2)
      << "no outline along the top of " << run.timeline.span_name(s);
}

// At 1280x720 the compare view shows every row of both runs: the imported trace (its host
// collapsed) above a 4-stage pipeline; a fixed half each cut the last rank off.
TEST(Screenshot, CompareFitsAnImportedTraceAndAFourStagePipelineAt1280x720) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  App app;
  add_kineto_trace(app);
  app.session().add_run(make_run(pipeline(), "pipeline"));
  ScreenshotOptions o = sized(1280, 720);
  o.view = ViewKind::kCompare;
  render_frames(app, o);
  EXPECT_TRUE(app.compare().rows_fit());
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
    ScreenshotOptions o = sized(1000, 600);
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

// The what-if starts from the shown run's configuration even where it is past the controls' own
// limits (1,024 microbatches, dp 64): a run of 8,192 microbatches or on dp 128 was clamped to
// them and predicted so without a word. (Each past one limit alone, on a small model, so that the
// predictions the view makes take a moment.)
TEST(Screenshot, WhatIfKeepsARunsConfigurationPastTheControlsLimits) {
  if (!have_display())
    GTEST_SKIP() << "no X display: ctest runs this under Xvfb when xvfb is installed";
  for (const auto& [dp, microbatches] : {std::pair{1, 1100}, std::pair{70, 2}}) {
    traces::Timeline t = pipeline();
    t.run.mesh = {dp, 2, 1};
    t.run.family = "1f1b";
    t.run.microbatches = microbatches;
    t.run.workload = {.kind = traces::ModelKind::kMlp,
                      .layers = 2,
                      .hidden = 8,
                      .batch = int64_t{dp} * microbatches};
    App app(make_predictor());
    app.session().add_run(make_run(t, "past the limits"));
    ScreenshotOptions o = sized(900, 600);
    o.view = ViewKind::kWhatIf;
    render_frames(app, o);
    EXPECT_EQ(app.whatif().config().microbatches, microbatches);
    EXPECT_EQ(app.whatif().config().dp, dp);
  }
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
    ScreenshotOptions o = sized(900, 600);
    o.view = v;
    const Image img = render_frames(app, o);
    EXPECT_EQ(app.view(), v);
    // Both draw bubble time in red: the stats bars' peer-wait part, the compare view's idle spans.
    EXPECT_GT(count_color(img, 0, 0, img.width, img.height, kBubbleColor), 100) << name(v);
  }
}

}  // namespace
}  // namespace meshscope::gui
