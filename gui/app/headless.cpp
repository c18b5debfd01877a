// --screenshot and --bench drivers.
#include "gui/app/headless.h"

#include <imgui.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "gui/app/platform.h"
#include "gui/view/synthetic.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

using Clock = std::chrono::steady_clock;

// Resident set size in bytes from /proc/self/statm; 0 where unavailable.
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

Image render_frames(App& app, const ScreenshotOptions& o) {
  Window window(WindowOptions{o.width, o.height, false, "meshscope"});
  app.set_view(o.view);
  app.timeline().set_flows(o.flows);
  Session& s = app.session();
  const int frames = std::max(o.frames, 2);
  for (int i = 0; i + 1 < frames; ++i) {
    window.begin_frame();
    app.frame(0);
    window.end_frame(true);
    if (i == 0) {
      // After the first frame the views know their size: apply the requested zoom and playhead.
      if (o.range && s.primary_run()) {
        const Run& r = *s.primary_run();
        const double len = static_cast<double>(r.end_ns() - r.begin_ns());
        app.timeline().axis().show(r.begin_ns() + static_cast<int64_t>(o.range->first * len),
                                   r.begin_ns() + static_cast<int64_t>(o.range->second * len));
      }
      if (o.playhead) {
        s.playhead.seek_fraction(*o.playhead);
        s.show_playhead = true;
      }
    }
  }
  // The what-if view simulates in the background: keep drawing until it has its answer.
  for (int waited = 0; app.busy() && waited < 600; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    window.begin_frame();
    app.frame(0);
    window.end_frame(true);
  }
  // The frame that is captured: rendered into the back buffer and read before any swap.
  window.begin_frame();
  app.frame(0);
  window.end_frame(false);
  return window.read_pixels();
}

void take_screenshot(App& app, const ScreenshotOptions& o) {
  write_png(o.out, render_frames(app, o));
}

double run_bench(App& app, const BenchOptions& o, std::ostream& out) {
  Session& s = app.session();
  const size_t rss_before = resident_bytes();
  if (s.runs.empty()) {
    SyntheticOptions so;
    so.dp = 4;
    so.pp = 8;
    so.microbatches = 32;
    so.steps = steps_for_spans(so, o.spans);
    const auto t0 = Clock::now();
    traces::Timeline t = make_synthetic_pipeline(so);
    const auto t1 = Clock::now();
    s.add_run(make_run(std::move(t),
                       "synthetic 1f1b dp=4 pp=8 m=32 x" + std::to_string(so.steps) + " steps"));
    const auto t2 = Clock::now();
    out << "generated " << s.runs.back()->label << " in "
        << std::chrono::duration<double>(t1 - t0).count()
        << " s; idle spans, sort, index and analysis in "
        << std::chrono::duration<double>(t2 - t1).count() << " s\n";
  }
  const Run& run = *s.primary_run();
  const traces::Timeline& t = run.timeline;
  const size_t n = t.spans.size();
  const size_t structural = t.spans.capacity() * sizeof(traces::Span) +
                            t.flows.capacity() * sizeof(traces::Flow) + run.index->memory_bytes();
  char line[256];
  std::snprintf(line, sizeof line,
                "run: %zu spans (%zu idle derived), %zu flows, %zu devices, %zu rows\n"
                "memory: spans+flows+index %.1f B/span; resident growth %.1f B/span\n",
                n,
                static_cast<size_t>(std::count_if(
                    t.spans.begin(), t.spans.end(),
                    [](const traces::Span& x) { return x.kind == traces::SpanKind::kIdle; })),
                t.flows.size(), t.devices.size(), run.index->rows().size(),
                static_cast<double>(structural) / static_cast<double>(std::max<size_t>(n, 1)),
                rss_before ? static_cast<double>(resident_bytes() - rss_before) /
                                 static_cast<double>(std::max<size_t>(n, 1))
                           : 0.0);
  out << line;

  NullPlatform platform(o.width, o.height);
  app.set_view(ViewKind::kTimeline);
  for (int i = 0; i < 2; ++i) {  // lay out once so the axis knows its width
    platform.begin_frame(1.0f / 60);
    app.frame(0);
    platform.end_frame();
  }
  TimeAxis& axis = app.timeline().axis();
  std::snprintf(
      line, sizeof line,
      "frame build, %dx%d, %d frames per zoom (one core, no GPU: ImGui draw lists only)\n", o.width,
      o.height, o.frames);
  out << line;
  out << "  zoom        visible range      boxes   folded  flows   median ms    p95 ms    max ms\n";
  double worst_median = 0;
  for (double zoom : {1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6}) {
    axis.fit();
    axis.zoom_at(axis.width_px() * 0.37, zoom);
    std::vector<double> ms;
    for (int f = 0; f < o.frames + 2; ++f) {
      // Pan a little every frame so no frame repeats the previous one's work.
      axis.pan_px(f % 2 ? -7.0 : 5.0);
      const auto a = Clock::now();
      platform.begin_frame(1.0f / 60);
      app.frame(0);
      platform.end_frame();
      const auto b = Clock::now();
      if (f >= 2) ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double p95 = ms[std::min(
        ms.size() - 1, static_cast<size_t>(std::ceil(0.95 * static_cast<double>(ms.size()))) - 1)];
    worst_median = std::max(worst_median, median);
    const PaintStats& ps = app.timeline().last_paint();
    std::snprintf(line, sizeof line, "  %-9g %16s %9zu %8zu %6zu %11.2f %9.2f %9.2f\n", zoom,
                  traces::format_duration(static_cast<int64_t>(axis.range_ns())).c_str(), ps.boxes,
                  ps.folded, ps.flows, median, p95, ms.back());
    out << line;
  }
  return worst_median;
}

}  // namespace meshscope::gui
