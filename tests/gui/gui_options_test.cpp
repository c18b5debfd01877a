// meshscope-gui's command line (parse_gui_options): each option's accepted values, each refusal
// with the exact line the viewer prints, and --help. No window: the options are read and checked
// before any is made.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gui/app/gui_options.h"
#include "gui/app/session.h"
#include "tests/remove_at_exit.h"

namespace meshscope::gui {
namespace {

GuiCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "meshscope-gui");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_gui_options(static_cast<int>(argv.size()), argv.data());
}

// The options of a command line the viewer runs with (a test failure names the refusal).
GuiOptions accepted(std::vector<std::string> args) {
  GuiCommandLine line = parse(std::move(args));
  EXPECT_EQ(line.error, "");
  EXPECT_EQ(line.help, "");
  return line.options.value_or(GuiOptions{});
}

// A refusal made by CLI11 (followed by "Run with --help ...") or by the checks after it.
void expect_refused(std::vector<std::string> args, const std::string& error, bool suggests_help) {
  SCOPED_TRACE(error);
  const GuiCommandLine line = parse(std::move(args));
  EXPECT_FALSE(line.options.has_value());
  EXPECT_EQ(line.help, "");
  EXPECT_EQ(line.error, error);
  EXPECT_EQ(line.error_suggests_help, suggests_help);
}

// $MESHSCOPE_MEMORY_LIMIT set for one test and put back afterwards.
class MemoryLimit {
 public:
  explicit MemoryLimit(const char* value) {
    if (const char* old = std::getenv(kName)) old_ = old;
    setenv(kName, value, 1);
  }
  ~MemoryLimit() {
    if (old_)
      setenv(kName, old_->c_str(), 1);
    else
      unsetenv(kName);
  }
  MemoryLimit(const MemoryLimit&) = delete;
  MemoryLimit& operator=(const MemoryLimit&) = delete;

 private:
  static constexpr const char* kName = "MESHSCOPE_MEMORY_LIMIT";
  std::optional<std::string> old_;
};

TEST(GuiOptions, NoArgumentsOpenATimelineWindow) {
  const GuiOptions o = accepted({});
  EXPECT_TRUE(o.traces.empty());
  EXPECT_FALSE(o.rank_from_file_order);
  EXPECT_EQ(o.synthetic_spans, 0u);
  EXPECT_FALSE(o.bench);
  EXPECT_TRUE(o.start.out.empty());
  EXPECT_EQ(o.start.frames, 3);
  EXPECT_EQ(o.start.width, 1600);
  EXPECT_EQ(o.start.height, 900);
  EXPECT_EQ(o.start.view, ViewKind::kTimeline);
  EXPECT_FALSE(o.start.playhead.has_value());
  EXPECT_FALSE(o.start.range.has_value());
  EXPECT_TRUE(o.start.flows);
  EXPECT_FALSE(o.start.critical_path);
}

TEST(GuiOptions, AcceptsEachOptionsValue) {
  EXPECT_EQ(accepted({"a.json", "runs/"}).traces, (std::vector<std::string>{"a.json", "runs/"}));
  EXPECT_EQ(accepted({"--screenshot", "out.png"}).start.out, "out.png");
  EXPECT_EQ(accepted({"--screenshot", "out.png", "--frames", "1000"}).start.frames, 1000);
  const GuiOptions sized = accepted({"--size", "64x16384"});
  EXPECT_EQ(sized.start.width, 64);
  EXPECT_EQ(sized.start.height, 16384);
  EXPECT_EQ(accepted({"--view", "what-if"}).start.view, ViewKind::kWhatIf);
  EXPECT_EQ(accepted({"--view", "mesh"}).start.view, ViewKind::kMesh);
  EXPECT_EQ(accepted({"--range", "0:0.25"}).start.range, std::make_pair(0.0, 0.25));
  EXPECT_EQ(accepted({"--playhead", "0.5"}).start.playhead, 0.5);
  EXPECT_EQ(accepted({"--playhead", "0"}).start.playhead, 0.0);
  EXPECT_EQ(accepted({"--playhead", "1"}).start.playhead, 1.0);
  EXPECT_TRUE(accepted({"--rank-from", "file-order"}).rank_from_file_order);
  EXPECT_FALSE(accepted({"--rank-from", "distributed-info"}).rank_from_file_order);
  EXPECT_FALSE(accepted({"--no-flows"}).start.flows);
  EXPECT_TRUE(accepted({"--critical-path"}).start.critical_path);
  EXPECT_EQ(accepted({"--synthetic", "1000"}).synthetic_spans, 1000u);
}

TEST(GuiOptions, TheBenchmarkTakesItsSizeSpansAndFrames) {
  const GuiOptions o =
      accepted({"--bench", "--bench-spans", "1000", "--bench-frames", "7", "--size", "800x600"});
  EXPECT_TRUE(o.bench);
  EXPECT_EQ(o.bench_options.spans, 1000u);
  EXPECT_EQ(o.bench_options.frames, 7);
  EXPECT_EQ(o.bench_options.width, 800);
  EXPECT_EQ(o.bench_options.height, 600);
  // --size's default, not BenchOptions' own 1920x1080, as the viewer always ran it.
  const GuiOptions plain = accepted({"--bench"});
  EXPECT_EQ(plain.bench_options.width, 1600);
  EXPECT_EQ(plain.bench_options.height, 900);
  EXPECT_EQ(plain.bench_options.spans, 10'000'000u);
}

TEST(GuiOptions, RefusesEachBadValueOfCli11sChecks) {
  expect_refused({""}, "traces: the path is empty", true);
  expect_refused({"--screenshot", ""}, "--screenshot: an empty path (a window would open instead)",
                 true);
  expect_refused({"--screenshot", "x.png", "--frames", "0"},
                 "--frames: Value 0 not in range 1 to 1000", true);
  expect_refused({"--frames", "3"}, "--frames requires --screenshot", true);
  expect_refused({"--playhead", "2"}, "--playhead: a fraction of the step in [0, 1], got 2", true);
  // NaN fails every comparison, so a range check passes it: this one names it.
  expect_refused({"--playhead", "nan"}, "--playhead: a fraction of the step in [0, 1], got nan",
                 true);
  expect_refused({"--rank-from", "bogus"},
                 "--rank-from: bogus not in {distributed-info,file-order}", true);
  expect_refused({"--synthetic", "abc"}, "Could not convert: --synthetic = abc", true);
  // CLI11 had wrapped -1 around to 2^64 - 1 spans, refused as a trace that cannot fit.
  expect_refused({"--synthetic", "-1"}, "--synthetic: a number of spans is 0 or more, got -1",
                 true);
  expect_refused({"--bench", "--bench-spans", "-5"},
                 "--bench-spans: a number of spans is 0 or more, got -5", true);
  expect_refused({"--bench", "--view", "mesh"}, "--view excludes --bench", true);
  expect_refused({"--bench-spans", "5"}, "--bench-spans requires --bench", true);
  expect_refused({"--bench", "--bench-frames", "0"},
                 "--bench-frames: Value 0 not in range 1 to 100000", true);
  expect_refused({"--bogus"}, "The following argument was not expected: --bogus", true);
}

TEST(GuiOptions, RefusesABadSizeViewOrRange) {
  const std::string bad_size = " (want WxH, each 64 to 16384, e.g. 1600x900)";
  expect_refused({"--size", "63x900"}, "bad --size '63x900'" + bad_size, false);
  expect_refused({"--size", "1600x16385"}, "bad --size '1600x16385'" + bad_size, false);
  // The whole text: "800x600x3" had been read as 800x600.
  expect_refused({"--size", "800x600x3"}, "bad --size '800x600x3'" + bad_size, false);
  expect_refused({"--size", "abc"}, "bad --size 'abc'" + bad_size, false);
  expect_refused({"--view", "nope"},
                 "unknown --view 'nope' (timeline, mesh, stats, compare, what-if)", false);
  expect_refused({"--range", "0.2:0.3:0.4"},
                 "bad --range '0.2:0.3:0.4' (want FROM:TO, e.g. 0:0.25)", false);
  expect_refused({"--range", "0.5:0.1"}, "bad --range '0.5:0.1' (want FROM:TO, e.g. 0:0.25)",
                 false);
  expect_refused({"--range", "-0.1:0.5"}, "bad --range '-0.1:0.5' (want FROM:TO, e.g. 0:0.25)",
                 false);
  // Of several, the last checked is said.
  expect_refused({"--size", "1x1", "--view", "nope", "--range", "9:1"},
                 "bad --range '9:1' (want FROM:TO, e.g. 0:0.25)", false);
}

// --screenshot's PNG is checked as every output of `meshscope` is, before a trace is opened or a
// window made: a folder that is missing (it failed only after the traces were read, exit 1), and
// a trace the viewer reads, which the PNG had replaced (`--screenshot run.json run.json`).
TEST(GuiOptions, RefusesAScreenshotThatCannotBeWrittenOrNamesATrace) {
  namespace fs = std::filesystem;
  const fs::path dir = ::meshscope::testing::process_temp_path("gui_screenshot_path");
  fs::remove_all(dir);
  fs::create_directories(dir / "job");
  const std::string trace = (dir / "run.json").string(),
                    in_job = (dir / "job" / "rank0.json").string();
  for (const std::string& t : {trace, in_job}) std::ofstream(t) << R"({"traceEvents":[]})";
  const std::string missing = (dir / "missing" / "a.png").string();
  expect_refused({"--screenshot", missing, trace},
                 "--screenshot: cannot write '" + missing + "': folder '" +
                     (dir / "missing").string() + "': No such file or directory",
                 false);
  expect_refused({"--screenshot", trace, trace},
                 "--screenshot names '" + trace +
                     "', a trace it opens: writing the PNG would replace it; give another path",
                 false);
  // The same file under another name, and a file of a folder of per-rank traces.
  const std::string other_name = (dir / "job" / ".." / "run.json").string();
  EXPECT_NE(parse({"--screenshot", other_name, trace}).error.find("a trace it opens"),
            std::string::npos);
  expect_refused({"--screenshot", in_job, (dir / "job").string()},
                 "--screenshot names '" + in_job + "', a file of the folder '" +
                     (dir / "job").string() +
                     "' of traces: writing the PNG would replace it; give another path",
                 false);
  EXPECT_EQ(std::ifstream(trace).get(), '{');  // left as it was
  // A new PNG beside the traces, or in their folder, is no trace.
  EXPECT_EQ(accepted({"--screenshot", (dir / "job" / "shot.png").string(), (dir / "job").string()})
                .start.out,
            (dir / "job" / "shot.png").string());
  fs::remove_all(dir);
}

TEST(GuiOptions, RefusesASyntheticTraceThatCannotFit) {
  const MemoryLimit limit("1M");
  // 100,000 spans at 104 B each: 9.9 MiB.
  expect_refused({"--synthetic", "100000"},
                 "a synthetic trace of 100000 spans needs about 9.9 MiB, more than the 1.0 MiB of "
                 "memory available",
                 false);
  // The benchmark's own trace, 10 million spans unless --bench-spans says otherwise.
  expect_refused({"--bench"},
                 "a synthetic trace of 10000000 spans needs about 991.8 MiB, more than the 1.0 "
                 "MiB of memory available",
                 false);
  EXPECT_EQ(accepted({"--bench", "--bench-spans", "1000"}).bench_options.spans, 1000u);
  EXPECT_EQ(accepted({"--synthetic", "1000"}).synthetic_spans, 1000u);
}

TEST(GuiOptions, RefusesAMalformedMemoryLimit) {
  const MemoryLimit limit("zzz");
  expect_refused({},
                 "MESHSCOPE_MEMORY_LIMIT=\"zzz\": must be a number of bytes, or one with K, M, G "
                 "or T (4G: 4 GiB)",
                 false);
}

TEST(GuiOptions, HelpIsTheTextToPrint) {
  const std::string head =
      "meshscope-gui: see pipeline bubbles and communication, replay a step across the device "
      "mesh, compare runs, ask what-if\nUsage: meshscope-gui [OPTIONS] [traces...]\n";
  // -h as well, and even beside a bad value: help is asked first. (The texts are not compared
  // with each other: CLI11 lists --bench's "Excludes:" in the order of the options' addresses,
  // which differ from one parse to the next within a process.)
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"-h"}, {"--size", "1x1", "--help"}}) {
    const GuiCommandLine line = parse(args);
    EXPECT_FALSE(line.options.has_value());
    EXPECT_EQ(line.error, "");
    EXPECT_EQ(line.help.rfind(head, 0), 0u) << line.help;
    for (const char* option : {"--screenshot", "--frames", "--size", "--view", "--range",
                               "--playhead", "--rank-from", "--no-flows", "--critical-path",
                               "--synthetic", "--bench", "--bench-spans", "--bench-frames"})
      EXPECT_NE(line.help.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace meshscope::gui
