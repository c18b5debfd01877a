// meshscope-gui's command line: its options read and checked before any trace is opened or any
// window made, so that a bad argument is one error line and exit 2 (docs/GUI.md) and the checks
// run in tests without a display.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gui/app/headless.h"

namespace meshscope::gui {

struct GuiOptions {
  std::vector<std::string> traces;    // files or folders of per-rank files, opened in this order
  bool rank_from_file_order = false;  // --rank-from file-order
  size_t synthetic_spans = 0;         // --synthetic: also open a synthetic trace this big; 0: none
  bool bench = false;                 // --bench: print frame-build times and exit
  // --bench-spans and --bench-frames; the size is --size's (resident_before is the caller's).
  BenchOptions bench_options;
  // The view, size, arrows, critical path, zoom and playhead the window or the screenshot starts
  // with; start.out is --screenshot's PNG (empty: a window opens).
  ScreenshotOptions start;
};

// What the command line asks for: the options to run the viewer with, the help text, or why it
// is refused.
struct GuiCommandLine {
  std::optional<GuiOptions> options;  // set when the viewer is to run
  std::string help;                   // --help: print on stdout and exit 0
  std::string error;                  // one line, printed after "meshscope-gui: error: "; exit 2
  // CLI11's refusals (an unknown option, a value out of its range, a missing --screenshot) are
  // followed by "Run with --help for more information."; the checks made after parsing (--size,
  // --view, --range, the synthetic trace's memory) never were.
  bool error_suggests_help = false;
};

// Reads meshscope-gui's arguments (argv[0] is the program). A synthetic trace (--synthetic,
// --bench) that would not fit in the memory available (traces::available_memory_bytes) is
// refused here, before it is built; so is a malformed $MESHSCOPE_MEMORY_LIMIT, and a --screenshot
// that could not be written (a missing or read-only folder, a special file) or that names a trace
// it opens (the PNG would replace it).
GuiCommandLine parse_gui_options(int argc, const char* const* argv);

}  // namespace meshscope::gui
