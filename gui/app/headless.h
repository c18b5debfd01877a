// The two ways the viewer runs without a person: --screenshot renders N frames into a hidden
// window and writes the back buffer as a PNG; --bench builds frames without a window at several
// zoom levels and prints frame-time statistics.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <utility>

#include "gui/app/app.h"
#include "gui/view/png.h"

namespace meshscope::gui {

// The view fields (view .. critical_path) are also what the window starts with.
struct ScreenshotOptions {
  std::filesystem::path out;
  int frames = 3;
  int width = 1600;
  int height = 900;
  ViewKind view = ViewKind::kTimeline;
  std::optional<double> playhead;                  // fraction of the step, for the mesh view
  std::optional<std::pair<double, double>> range;  // fractions of the run shown in the timeline
  bool flows = true;
  bool critical_path = false;  // highlight the critical path in the timeline
};

// What the command line asks of the first frames, in a screenshot or in the window: the view,
// the arrows and the critical path before the first frame (start_view); the zoom and the
// playhead after it, once the views have sized themselves (start_zoom).
void start_view(App& app, const ScreenshotOptions& options);
void start_zoom(App& app, const ScreenshotOptions& options);

// Renders `frames` frames and returns the last one's pixels; the zoom and playhead options are
// applied after the first frame, when the views have sized themselves. Throws when no window can
// be opened.
Image render_frames(App& app, const ScreenshotOptions& options);
// render_frames, then writes options.out whole or not at all.
void take_screenshot(App& app, const ScreenshotOptions& options);

struct BenchOptions {
  size_t spans = 10'000'000;  // synthetic trace size when no trace is given
  int frames = 60;            // timed frames per zoom level
  int width = 1920;
  int height = 1080;
  // Resident set size before the traces were opened (resident_bytes()); 0: measure at the start
  // of run_bench, which sees only the synthetic trace's growth.
  size_t resident_before = 0;
};

// Resident set size in bytes from /proc/self/statm; 0 where unavailable.
size_t resident_bytes();

// Frame-build statistics (median, p95, max) at zoom levels from the whole run down to a few
// microseconds, and the memory per span; for `app`'s primary run, or a synthetic one added to
// `app` when it has none. Returns the worst median in milliseconds.
double run_bench(App& app, const BenchOptions& options, std::ostream& out);

}  // namespace meshscope::gui
