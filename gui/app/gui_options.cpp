// parse_gui_options: see gui_options.h.
#include "gui/app/gui_options.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "gui/app/session.h"
#include "gui/view/synthetic.h"
#include "traces/atomic_file.h"
#include "traces/byte_size.h"
#include "traces/host_memory.h"
#include "traces/printable.h"

namespace meshscope::gui {
namespace {

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

// Why --screenshot's PNG could not be written where asked, or "": a missing or read-only folder, a
// special file (traces::check_output_path), or a trace the viewer reads (the same file under any
// name, or a file of a folder of traces), which the PNG would replace. Checked before any trace
// is opened or window made: `--screenshot run.json run.json` had replaced the trace with a PNG.
std::string screenshot_path_problem(const std::string& out,
                                    const std::vector<std::string>& traces) {
  namespace fs = std::filesystem;
  try {
    traces::check_output_path(out);
  } catch (const std::exception& e) {
    return std::string("--screenshot: ") + e.what();
  }
  std::error_code ec;
  if (!fs::exists(out, ec)) return "";
  const fs::path folder =
      fs::path(out).parent_path().empty() ? fs::path(".") : fs::path(out).parent_path();
  for (const std::string& t : traces) {
    const bool is_folder = fs::is_directory(t, ec);
    if (is_folder ? fs::equivalent(folder, t, ec) : fs::equivalent(out, t, ec))
      return "--screenshot names '" + out + "', " +
             (is_folder ? "a file of the folder '" + t + "' of traces" : "a trace it opens") +
             ": writing the PNG would replace it; give another path";
  }
  return "";
}

// A count of spans read as size_t: CLI11 wraps "-1" around to 2^64 - 1 (refused as a synthetic
// trace of 18446744073709551615 spans that would not fit in memory): named for what it is.
CLI::Validator span_count_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        return v.find('-') != std::string::npos ? "a number of spans is 0 or more, got " + v : "";
      },
      "");
}

}  // namespace

GuiCommandLine parse_gui_options(int argc, const char* const* argv) {
  CLI::App cli{
      "meshscope-gui: see pipeline bubbles and communication, replay a step across the device "
      "mesh, "
      "compare runs, ask what-if",
      "meshscope-gui"};
  GuiOptions options;
  std::string screenshot, size = "1600x900", view = "timeline", range;
  double playhead = -1;
  bool no_flows = false;
  cli.add_option(
         "traces", options.traces,
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
  cli.add_option("--frames", options.start.frames, "frames to render before the screenshot")
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
  cli.add_flag("--critical-path", options.start.critical_path,
               "highlight the critical path in the timeline");
  cli.add_option("--synthetic", options.synthetic_spans,
                 "also open a synthetic 1F1B trace of about this many spans")
      ->check(span_count_check());
  CLI::Option* bench_flag = cli.add_flag("--bench", options.bench,
                                         "print frame-build times at several zoom levels and exit");
  // The benchmark sets its own zoom levels on the timeline: what the view shows is not asked.
  for (const char* name : {"--view", "--range", "--playhead", "--no-flows", "--critical-path"})
    cli.get_option(name)->excludes(bench_flag);
  cli.add_option("--bench-spans", options.bench_options.spans,
                 "spans of the synthetic benchmark trace")
      ->check(span_count_check())
      ->needs("--bench");
  cli.add_option("--bench-frames", options.bench_options.frames, "timed frames per zoom level")
      ->check(CLI::Range(1, 100000))
      ->needs("--bench");

  GuiCommandLine result;
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0 with CLI11's help text; a bad argument exits 2 (docs/GUI.md), not CLI11's
    // own codes, with one error line as every other (CLI11's bare text had no "meshscope-gui:
    // error:").
    if (e.get_exit_code() == 0) {
      std::ostringstream help;
      cli.exit(e, help);
      result.help = help.str();
    } else {
      result.error = traces::printable(e.what(), 400);
      result.error_suggests_help = true;
    }
    return result;
  }

  int width = 0, height = 0;
  std::pair<double, double> fractions;
  const std::optional<ViewKind> view_kind = parse_view(view);
  // Each check overwrites the one before: the last refusal is the one said.
  std::string bad;
  if (!parse_size(size, width, height))
    bad = "bad --size '" + size + "' (want WxH, each 64 to 16384, e.g. 1600x900)";
  if (!view_kind) bad = "unknown --view '" + view + "' (timeline, mesh, stats, compare, what-if)";
  if (!range.empty() && !parse_range(range, fractions))
    bad = "bad --range '" + range + "' (want FROM:TO, e.g. 0:0.25)";
  if (!screenshot.empty()) {
    if (std::string problem = screenshot_path_problem(screenshot, options.traces); !problem.empty())
      bad = std::move(problem);
  }
  // A synthetic trace is sized by its flag alone: refuse one that cannot fit before building it.
  for (const size_t spans :
       {options.synthetic_spans, options.bench ? options.bench_options.spans : size_t{0}}) {
    std::optional<double> available;
    try {
      available = traces::available_memory_bytes();
    } catch (const std::runtime_error& e) {  // a malformed $MESHSCOPE_MEMORY_LIMIT
      bad = e.what();
      break;
    }
    const double needed = synthetic_peak_bytes(spans);
    if (available && needed > *available) {
      bad = "a synthetic trace of " + std::to_string(spans) + " spans needs about " +
            traces::format_bytes(needed) + ", more than the " + traces::format_bytes(*available) +
            " of memory available";
    }
  }
  if (!bad.empty()) {
    result.error = bad;
    return result;
  }

  options.rank_from_file_order = rank_from == "file-order";
  options.bench_options.width = width;
  options.bench_options.height = height;
  options.start.out = screenshot;
  options.start.width = width;
  options.start.height = height;
  options.start.view = *view_kind;
  options.start.flows = !no_flows;
  if (playhead >= 0) options.start.playhead = playhead;
  if (!range.empty()) options.start.range = fractions;
  result.options = std::move(options);
  return result;
}

}  // namespace meshscope::gui
