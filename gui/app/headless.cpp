// --screenshot and --bench drivers.
#include "gui/app/headless.h"

#include <imgui.h>
#include <malloc.h>
#include <time.h>
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

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of the calling thread: what "building a frame on one core" costs, unaffected by other
// processes taking the core away (these machines are shared).
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Summary {
  double median = 0, p95 = 0, max = 0;
};

Summary summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t p95 = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(ms.size())));
  return {ms[ms.size() / 2], ms[std::clamp<size_t>(p95, 1, ms.size()) - 1], ms.back()};
}

}  // namespace

void start_view(App& app, const ScreenshotOptions& o) {
  app.set_view(o.view);
  app.timeline().set_flows(o.flows);
  app.timeline().set_critical_path(o.critical_path);
}

void start_zoom(App& app, const ScreenshotOptions& o) {
  Session& s = app.session();
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

Image render_frames(App& app, const ScreenshotOptions& o) {
  Window window(WindowOptions{o.width, o.height, false, "meshscope"});
  start_view(app, o);
  // At least three: the first selects the view asked for, the second draws it (the what-if view
  // submits its simulation then, so that the wait below sees it busy), the last is captured.
  const int frames = std::max(o.frames, 3);
  for (int i = 0; i + 1 < frames; ++i) {
    window.begin_frame();
    app.frame(0);
    window.end_frame(true);
    if (i == 0) start_zoom(app, o);  // the views know their size after the first frame
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
  // Resident growth is measured from before the run was built: from here for the synthetic trace,
  // from the caller's figure (taken before opening) for a trace that is already open.
  const size_t rss_before = o.resident_before ? o.resident_before : resident_bytes();
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
  // Hand freed heap (the generator's and the analysis' temporaries) back to the system so the
  // resident figure is what the viewer holds, not what glibc keeps cached.
  malloc_trim(0);
  const Run& run = *s.primary_run();
  const traces::Timeline& t = run.timeline;
  const size_t n = t.spans.size();
  const size_t structural = t.spans.capacity() * sizeof(traces::Span) +
                            t.flows.capacity() * sizeof(traces::Flow) + run.index->memory_bytes();
  // Signed: the resident set can shrink (malloc_trim handing back the loader's temporaries), and
  // an unsigned difference would then print a wrapped-around 2^64-scale figure.
  const size_t rss_after = resident_bytes();
  std::string growth = "n/a (no /proc/self/statm)";
  if (rss_before && rss_after) {
    const double d =
        static_cast<double>(static_cast<int64_t>(rss_after) - static_cast<int64_t>(rss_before));
    char g[64];
    std::snprintf(g, sizeof g, "%.1f B/span", d / static_cast<double>(std::max<size_t>(n, 1)));
    growth = g;
  }
  char line[320];
  std::snprintf(line, sizeof line,
                "run: %zu spans (%zu idle derived), %zu flows, %zu devices, %zu rows\n"
                "memory: spans+flows+index %.1f B/span; resident growth %s\n",
                n,
                static_cast<size_t>(std::count_if(
                    t.spans.begin(), t.spans.end(),
                    [](const traces::Span& x) { return x.kind == traces::SpanKind::kIdle; })),
                t.flows.size(), t.devices.size(), run.index->rows().size(),
                static_cast<double>(structural) / static_cast<double>(std::max<size_t>(n, 1)),
                growth.c_str());
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
  out << "  zoom      visible range    boxes  folded  flows |  cpu ms: median    p95    max |  "
         "wall ms: median    p95    max\n";
  double worst_median = 0;
  for (double zoom : {1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6}) {
    axis.fit();
    axis.zoom_at(axis.width_px() * 0.37, zoom);
    std::vector<double> cpu, wall;
    for (int f = 0; f < o.frames + 2; ++f) {
      // Pan a little every frame so no frame repeats the previous one's work.
      axis.pan_px(f % 2 ? -7.0 : 5.0);
      const double c0 = thread_cpu_ms();
      const auto w0 = Clock::now();
      platform.begin_frame(1.0f / 60);
      app.frame(0);
      platform.end_frame();
      const auto w1 = Clock::now();
      const double c1 = thread_cpu_ms();
      if (f < 2) continue;  // warm-up
      cpu.push_back(c1 - c0);
      wall.push_back(std::chrono::duration<double, std::milli>(w1 - w0).count());
    }
    const Summary c = summarize(cpu), w = summarize(wall);
    worst_median = std::max(worst_median, c.median);
    const PaintStats& ps = app.timeline().last_paint();
    std::snprintf(line, sizeof line,
                  "  %-7g %15s %8zu %7zu %6zu | %15.2f %6.2f %6.2f | %16.2f %6.2f %6.2f\n", zoom,
                  traces::format_duration(static_cast<int64_t>(axis.range_ns())).c_str(), ps.boxes,
                  ps.folded, ps.flows, c.median, c.p95, c.max, w.median, w.p95, w.max);
    out << line;
  }
  return worst_median;
}

}  // namespace meshscope::gui
