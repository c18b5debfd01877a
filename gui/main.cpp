// meshscope-gui: the desktop viewer. Thin: parses arguments, opens the traces, and runs the
// window loop, a headless screenshot or the frame-time benchmark.
#include <imgui.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gui/app/app.h"
#include "gui/app/headless.h"
#include "gui/app/platform.h"
#include "gui/app/predictor.h"
#include "gui/view/frame_pacing.h"
#include "gui/view/synthetic.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"
#include "traces/printable.h"

namespace {

using meshscope::gui::App;

// "1600x900" -> {1600, 900}; the whole text (%n: where the scan stopped), so "800x600x3" is no
// size (it was 800x600).
bool parse_size(const std::string& s, int& w, int& h) {
  int end = 0;
  return std::sscanf(s.c_str(), "%dx%d%n", &w, &h, &end) == 2 &&
         end == static_cast<int>(s.size()) && w >= 64 && h >= 64 && w <= 16384 && h <= 16384;
}

// "0:0.25" -> {0, 0.25}, the whole text ("0.2:0.3:0.4" is no range; it was 0.2:0.3).
bool parse_range(const std::string& s, std::pair<double, double>& r) {
  int end = 0;
  return std::sscanf(s.c_str(), "%lf:%lf%n", &r.first, &r.second, &end) == 2 &&
         end == static_cast<int>(s.size()) && r.first >= 0 && r.second <= 1 && r.first < r.second;
}

// `start`: the view, arrows, critical path, zoom and playhead the command line asked for.
int interactive(App& app, const meshscope::gui::ScreenshotOptions& start) {
  meshscope::gui::Window window({start.width, start.height, true, "meshscope"});
  for (const std::string& e : app.session().errors)
    std::fprintf(stderr, "meshscope-gui: error: %s\n", e.c_str());
  meshscope::gui::start_view(app, start);
  // Draw only when something changed (gui/view/frame_pacing.h): an idle viewer sleeps.
  meshscope::gui::FramePacing pacing;
  bool first = true;
  while (!window.should_close()) {
    const bool animating = app.session().playhead.playing() || app.busy();
    const bool event = window.wait_events(pacing.wait_s(animating));
    if (!pacing.should_draw(event, animating)) continue;  // the first frames always draw
    window.begin_frame();
    app.open_dropped(window.take_dropped_paths());
    app.frame(ImGui::GetIO().DeltaTime);
    window.end_frame();
    if (first) meshscope::gui::start_zoom(app, start);  // the views know their size now
    first = false;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "meshscope-gui: see pipeline bubbles and communication, replay a step across the device "
      "mesh, "
      "compare runs, ask what-if",
      "meshscope-gui"};
  std::vector<std::string> traces;
  std::string screenshot, size = "1600x900", view = "timeline", range;
  int frames = 3;
  double playhead = -1;
  size_t synthetic = 0;
  bool bench = false, no_flows = false, critical_path = false;
  meshscope::gui::BenchOptions bench_options;
  cli.add_option(
         "traces", traces,
         "trace files (Chrome/Kineto JSON, .json.gz, Nsight SQLite) or folders of per-rank files")
      ->check(CLI::Validator(
          [](std::string& path) -> std::string { return path.empty() ? "the path is empty" : ""; },
          "PATH"));
  cli.add_option("--screenshot", screenshot, "render headless, write this PNG and exit")
      ->check(CLI::Validator(
          [](std::string& path) -> std::string {
            return path.empty() ? "an empty path (a window would open instead)" : "";
          },
          ""));
  // Options of the headless modes are refused without their mode, not ignored by a window.
  cli.add_option("--frames", frames, "frames to render before the screenshot")
      ->check(CLI::Range(1, 1000))
      ->needs("--screenshot");
  cli.add_option("--size", size, "window size WxH, each 64 to 16384");
  cli.add_option("--view", view, "view to show: timeline, mesh, stats, compare, what-if");
  cli.add_option("--range", range,
                 "timeline: show this part of the run, as fractions FROM:TO (e.g. 0:0.25)");
  // NaN passes a range check (every comparison with it is false): it was taken as 0.
  cli.add_option("--playhead", playhead, "replay: put the playhead at this fraction of the step")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const double x = std::strtod(v.c_str(), nullptr);
            return x >= 0 && x <= 1 ? "" : "a fraction of the step in [0, 1], got " + v;
          },
          "FRACTION"));
  std::string rank_from = "distributed-info";
  cli.add_option("--rank-from", rank_from,
                 "a folder's ranks: distributed-info, each file's distributedInfo.rank (files "
                 "without one take their position); file-order, the files' positions (sorted "
                 "by name), as in `meshscope analyze`")
      ->check(CLI::IsMember({"distributed-info", "file-order"}))
      ->capture_default_str();
  cli.add_flag("--no-flows", no_flows, "do not draw send -> recv arrows");
  cli.add_flag("--critical-path", critical_path, "highlight the critical path in the timeline");
  cli.add_option("--synthetic", synthetic,
                 "also open a synthetic 1F1B trace of about this many spans");
  CLI::Option* bench_flag =
      cli.add_flag("--bench", bench, "print frame-build times at several zoom levels and exit");
  // The benchmark sets its own zoom levels on the timeline: what the view shows is not asked.
  for (const char* name : {"--view", "--range", "--playhead", "--no-flows", "--critical-path"})
    cli.get_option(name)->excludes(bench_flag);
  cli.add_option("--bench-spans", bench_options.spans, "spans of the synthetic benchmark trace")
      ->needs("--bench");
  cli.add_option("--bench-frames", bench_options.frames, "timed frames per zoom level")
      ->check(CLI::Range(1, 100000))
      ->needs("--bench");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a bad argument exits 2 (docs/GUI.md), not CLI11's own codes,
    // with one error line as every other (CLI11's bare text had no "meshscope-gui: error:").
    if (e.get_exit_code() == 0) return cli.exit(e);
    std::fprintf(stderr, "meshscope-gui: error: %s\nRun with --help for more information.\n",
                 meshscope::traces::printable(e.what(), 400).c_str());
    return 2;
  }

  int width = 0, height = 0;
  std::pair<double, double> fractions;
  const auto view_kind = meshscope::gui::parse_view(view);
  std::string bad;
  if (!parse_size(size, width, height))
    bad = "bad --size '" + size + "' (want WxH, each 64 to 16384, e.g. 1600x900)";
  if (!view_kind) bad = "unknown --view '" + view + "' (timeline, mesh, stats, compare, what-if)";
  if (!range.empty() && !parse_range(range, fractions))
    bad = "bad --range '" + range + "' (want FROM:TO, e.g. 0:0.25)";
  // A synthetic trace is sized by its flag alone: refuse one that cannot fit before building it.
  for (const size_t spans : {synthetic, bench ? bench_options.spans : size_t{0}}) {
    std::optional<double> available;
    try {
      available = meshscope::traces::available_memory_bytes();
    } catch (const std::runtime_error& e) {  // a malformed $MESHSCOPE_MEMORY_LIMIT
      bad = e.what();
      break;
    }
    const double needed = meshscope::gui::synthetic_peak_bytes(spans);
    if (available && needed > *available) {
      bad = "a synthetic trace of " + std::to_string(spans) + " spans needs about " +
            meshscope::traces::format_bytes(needed) + ", more than the " +
            meshscope::traces::format_bytes(*available) + " of memory available";
    }
  }
  if (!bad.empty()) {
    std::fprintf(stderr, "meshscope-gui: error: %s\n", bad.c_str());
    return 2;
  }
  try {
    bench_options.resident_before = meshscope::gui::resident_bytes();
    App app(meshscope::gui::make_predictor());
    meshscope::traces::ImportOptions import_options;
    import_options.rank_from_file_order = rank_from == "file-order";
    app.set_import_options(import_options);
    for (const std::string& t : traces) app.open(t);
    if (synthetic > 0) {
      meshscope::gui::SyntheticOptions so;
      so.steps = meshscope::gui::steps_for_spans(so, synthetic);
      app.session().add_run(meshscope::gui::make_run(meshscope::gui::make_synthetic_pipeline(so),
                                                     "synthetic 1f1b pp=4 m=8"));
    }
    // What the importer warned of, as `meshscope analyze` says it (the window shows it too).
    for (const std::string& w : app.session().warnings)
      std::fprintf(stderr, "meshscope-gui: warning: %s\n", w.c_str());
    const bool headless = bench || !screenshot.empty();
    if (headless && !app.session().errors.empty()) {
      for (const std::string& e : app.session().errors)
        std::fprintf(stderr, "meshscope-gui: error: %s\n", e.c_str());
      return 1;
    }
    if (bench) {
      bench_options.width = width;
      bench_options.height = height;
      meshscope::gui::run_bench(app, bench_options, std::cout);
      return 0;
    }
    meshscope::gui::ScreenshotOptions o;
    o.out = screenshot;
    o.frames = frames;
    o.width = width;
    o.height = height;
    o.view = *view_kind;
    o.flows = !no_flows;
    o.critical_path = critical_path;
    if (playhead >= 0) o.playhead = playhead;
    if (!range.empty()) o.range = fractions;
    if (!screenshot.empty()) {
      meshscope::gui::take_screenshot(app, o);
      return 0;
    }
    return interactive(app, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshscope-gui: error: %s\n", e.what());
    return 1;
  }
}
