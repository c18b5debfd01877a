// meshscope-gui: the desktop viewer. Thin: reads its arguments (gui/app/gui_options.h), opens the
// traces, and runs the window loop, a headless screenshot or the frame-time benchmark.
#include <imgui.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "gui/app/app.h"
#include "gui/app/gui_options.h"
#include "gui/app/headless.h"
#include "gui/app/platform.h"
#include "gui/app/predictor.h"
#include "gui/view/frame_pacing.h"
#include "gui/view/synthetic.h"

namespace {

using meshscope::gui::App;

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
  const meshscope::gui::GuiCommandLine command_line = meshscope::gui::parse_gui_options(argc, argv);
  if (!command_line.options) {
    if (command_line.error.empty()) {  // --help
      std::fputs(command_line.help.c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "meshscope-gui: error: %s\n%s", command_line.error.c_str(),
                 command_line.error_suggests_help ? "Run with --help for more information.\n" : "");
    return 2;
  }
  const meshscope::gui::GuiOptions& options = *command_line.options;
  try {
    meshscope::gui::BenchOptions bench_options = options.bench_options;
    bench_options.resident_before = meshscope::gui::resident_bytes();
    App app(meshscope::gui::make_predictor());
    meshscope::traces::ImportOptions import_options;
    import_options.rank_from_file_order = options.rank_from_file_order;
    app.set_import_options(import_options);
    for (const std::string& t : options.traces) app.open(t);
    if (options.synthetic_spans > 0) {
      meshscope::gui::SyntheticOptions so;
      so.steps = meshscope::gui::steps_for_spans(so, options.synthetic_spans);
      app.session().add_run(meshscope::gui::make_run(meshscope::gui::make_synthetic_pipeline(so),
                                                     "synthetic 1f1b pp=4 m=8"));
    }
    // What the importer warned of, as `meshscope analyze` says it (the window shows it too).
    for (const std::string& w : app.session().warnings)
      std::fprintf(stderr, "meshscope-gui: warning: %s\n", w.c_str());
    const bool headless = options.bench || !options.start.out.empty();
    if (headless && !app.session().errors.empty()) {
      for (const std::string& e : app.session().errors)
        std::fprintf(stderr, "meshscope-gui: error: %s\n", e.c_str());
      return 1;
    }
    if (options.bench) {
      meshscope::gui::run_bench(app, bench_options, std::cout);
      return 0;
    }
    if (!options.start.out.empty()) {
      meshscope::gui::take_screenshot(app, options.start);
      return 0;
    }
    return interactive(app, options.start);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshscope-gui: error: %s\n", e.what());
    return 1;
  }
}
