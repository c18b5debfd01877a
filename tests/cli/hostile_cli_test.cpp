// The `meshscope` command under hostile use (issue 14): special files and links as outputs,
// output paths checked before a run, oversized inputs refused with an estimate, untrusted bytes
// escaped in messages, one exit-code rule, concurrent writers, signals during a write, and a
// broken schedule that must end in the watchdog's error. Each case runs the built binary.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "cli_test_util.h"

namespace {

namespace fs = std::filesystem;

using meshscope::cli_testing::read_file;
using meshscope::cli_testing::Result;
using meshscope::cli_testing::shell;

const std::string kMeshscope = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";

fs::path dir() {
  static const fs::path d = meshscope::cli_testing::temp_dir("hostile");
  return d;
}

Result meshscope(const std::string& args) { return shell(kMeshscope + " " + args); }

// A small valid trace to convert.
fs::path small_trace() {
  const fs::path p = dir() / "small.json";
  if (!fs::exists(p)) {
    std::ofstream(p) << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,)"
                        R"("ts":1,"dur":2},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,)"
                        R"("ts":4,"dur":2}]})";
  }
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Case 1: an output that is a device node, a FIFO or a symbolic link is refused and left as it
// was; `-o -` writes to stdout.
TEST(HostileCli, SpecialFilesAndLinksGivenAsOutputAreRefusedAndLeftAlone) {
  const fs::path fifo = dir() / "out.fifo";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const fs::path target = dir() / "kept.json", link = dir() / "link.json";
  std::ofstream(target) << "kept";
  fs::remove(link);
  fs::create_symlink(target, link);
  // Never the real /dev/null or /dev/full: a broken build would replace them. A device node of
  // our own (root only) stands in for them.
  std::vector<fs::path> outputs = {fifo, link};
  const fs::path dev = dir() / "null";
  fs::remove(dev);
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) outputs.push_back(dev);
  for (const fs::path& out : outputs) {
    const Result r = meshscope("convert " + small_trace().string() + " -o " + out.string());
    EXPECT_NE(r.status, 0) << out << ": " << r.out;
    EXPECT_NE(r.err.find("only regular files are replaced"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read_file(target), "kept");
  if (fs::exists(dev)) {
    EXPECT_TRUE(fs::is_character_file(fs::symlink_status(dev)));
  }
  // The same check guards the other writers.
  const Result sched = meshscope("schedules --dump 1f1b --pp 2 -o " + fifo.string());
  EXPECT_NE(sched.status, 0);
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));

  const Result to_stdout = meshscope("convert " + small_trace().string() + " -o -");
  ASSERT_EQ(to_stdout.status, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out.rfind("{", 0), 0u) << to_stdout.out.substr(0, 200);
  EXPECT_NE(to_stdout.out.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(to_stdout.err.find("wrote stdout"), std::string::npos) << to_stdout.err;
}

// Case 10: output paths are checked when the command line is parsed, before the run.
TEST(HostileCli, AnUnwritableOutputPathFailsBeforeTheRun) {
  for (const std::string out : {"/nonexistent/x.json", "''", "/proc/version"}) {
    const auto t0 = std::chrono::steady_clock::now();
    // A run that would take minutes: it must not start.
    const Result r =
        meshscope("run --backend cpu --steps 1000 --layers 4 --hidden 64 --out " + out);
    EXPECT_NE(r.status, 0) << out;
    EXPECT_LT(seconds_since(t0), 10) << out << " ran before failing";
    EXPECT_EQ(r.out.find("loss"), std::string::npos) << out << ": " << r.out;
    EXPECT_LE(count(r.err, "\n"), 2u) << r.err;  // the error, and CLI11's "Run with --help"
  }
  EXPECT_NE(meshscope("run --out /nonexistent/x.json").err.find("/nonexistent"), std::string::npos);
  EXPECT_NE(meshscope("run --out ''").err.find("the output path is empty"), std::string::npos);
  EXPECT_NE(meshscope("run --out /proc/version").err.find("kernel file system (proc)"),
            std::string::npos);
  EXPECT_NE(meshscope("run --dump-schedule /nonexistent/s.txt").status, 0);
}

// An output that names a file the command reads is refused before any work, and the input is left
// as it was: under another name of the same file, and as a file of a folder of traces.
TEST(HostileCli, AnOutputThatNamesAnInputIsRefusedAndTheInputKept) {
  const fs::path d = dir() / "output_is_input";
  fs::create_directories(d / "job");
  const std::string config = (d / "c.json").string();
  std::ofstream(config) << R"({"model":{"kind":"gpt","layers":4,"hidden":256,"heads":4,)"
                           R"("seq":128,"vocab":1000},"mesh":{"dp":1,"pp":2,"tp":1},)"
                           R"("batch":{"micro":1,"global":4},"schedule":"1f1b"})";
  const std::string trace = (d / "job" / "rank0.json").string();
  fs::copy_file(small_trace(), trace, fs::copy_options::overwrite_existing);
  const std::string sched = (d / "s.txt").string();
  ASSERT_EQ(meshscope("schedules --dump 1f1b --pp 2 -m 2 -o " + sched).status, 0);
  const std::string config_text = read_file(config), trace_text = read_file(trace),
                    sched_text = read_file(sched);
  const std::string other_name = (d / "job" / ".." / "c.json").string();
  const std::pair<std::string, std::string> cases[] = {
      {"predict --config " + config + " --csv " + other_name, "--csv names"},
      {"predict --config " + config + " --plot " + config, "--plot names"},
      {"simulate --config " + config + " --out " + config, "the file read as --config"},
      {"convert " + trace + " --out " + trace, "the file read as an input trace"},
      {"convert " + (d / "job").string() + " --out " + trace, "a file of the folder"},
      {"calibrate " + trace + " -o " + trace, "the file read as a profiled trace"},
      {"schedules --from " + sched + " -o " + sched, "the file read as --from"},
      {"run --schedule-file " + sched + " --out " + sched, "the file read as --schedule-file"},
  };
  for (const auto& [args, want] : cases) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args;  // a command line refused, as an unwritable --out is
    EXPECT_NE(r.err.find(want), std::string::npos) << args << ": " << r.err;
    EXPECT_NE(r.err.find("writing it would replace the input"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_file(config), config_text);
  EXPECT_EQ(read_file(trace), trace_text);
  EXPECT_EQ(read_file(sched), sched_text);
  // A new file beside the inputs is no input.
  EXPECT_EQ(meshscope("convert " + trace + " --out " + (d / "job" / "merged.json").string()).status,
            0);
}

// Case 4: schedule files have a size limit, /dev/zero is refused quickly.
TEST(HostileCli, OversizedScheduleFilesAreRefusedQuickly) {
  for (const std::string cmd : {"validate /dev/zero", "run --schedule-file /dev/zero"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = meshscope(cmd);
    EXPECT_NE(r.status, 0) << cmd;
    EXPECT_NE(r.err.find("more than the 64 MiB a schedule file may have"), std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_LT(seconds_since(t0), 10) << cmd;
  }
  // Hand-written JSON (configs, hardware files, calibrations) has its bound too: /dev/zero took
  // all the memory there was and ended in std::bad_alloc.
  const auto t0 = std::chrono::steady_clock::now();
  const Result config = meshscope("predict --config /dev/zero");
  EXPECT_EQ(config.err,
            "meshscope: error: /dev/zero: has more than the 64 MiB a config file may have\n");
  EXPECT_LT(seconds_since(t0), 10);
  const fs::path big = dir() / "big.sched";
  std::ofstream(big) << "mesh pp=1\n";
  fs::resize_file(big, uintmax_t{20} << 30);  // 20 GiB, sparse
  const Result r = meshscope("validate " + big.string());
  EXPECT_NE(r.err.find("is 21474836480 bytes"), std::string::npos) << r.err;
  fs::remove(big);
}

// What a command prints to stdout and cannot write there fails it: a full disk under `> file`
// left a cut schedule, or an empty --json, and exit 0.
TEST(HostileCli, StandardOutputThatCannotBeWrittenFailsTheCommand) {
  for (const std::string cmd : {"predict --config korthikanti-175b.json --json > /dev/full",
                                "schedules --dump 1f1b --pp 8 -m 64 > /dev/full", "catalog >&-"}) {
    const Result r = meshscope(cmd);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_NE(r.err.find("meshscope: error: cannot write to standard output"), std::string::npos)
        << cmd << ": " << r.err;
  }
}

// A file-size limit (ulimit -f) fails the write with its reason and leaves no temp file; SIGXFSZ
// ended the process without a word and left the temp.
TEST(HostileCli, AFileSizeLimitFailsTheWriteWithItsReason) {
  const fs::path folder = meshscope::cli_testing::temp_dir("hostile_fsize");
  const fs::path out = folder / "trace.json";
  const Result r = shell("ulimit -f 8; " + kMeshscope +
                         " run --backend cpu --model mlp --steps 1 --out " + out.string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write " + out.string() + ": File too large"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::is_empty(folder)) << "a temp file was left";
  // Two outputs of one command: the trace fails, and the schedule written beside it keeps its
  // old contents too (it was replaced before).
  const fs::path trace = folder / "sim.json", sched = folder / "sim.sched";
  std::ofstream(trace) << "old trace";
  std::ofstream(sched) << "old schedule";
  // A 6 KB schedule under the limit (16 KiB: /bin/sh counts 512-byte blocks), a 150 KB trace.
  const fs::path config = meshscope::cli_testing::temp_dir("hostile_fsize_config") / "c.json";
  std::ofstream(config) << R"({"model": {"kind": "mlp", "layers": 4, "hidden": 256},
      "mesh": {"pp": 2}, "batch": {"global": 64, "micro": 1}, "cluster": {"gpu": "h100-sxm"}})";
  const Result sim = shell("ulimit -f 32; " + kMeshscope + " simulate --config " + config.string() +
                           " --out " + trace.string() + " --schedule-out " + sched.string());
  EXPECT_EQ(sim.status, 1) << sim.err;
  EXPECT_NE(sim.err.find("File too large"), std::string::npos) << sim.err;
  EXPECT_EQ(read_file(trace), "old trace");
  EXPECT_EQ(read_file(sched), "old schedule");
}

// Case 5: sizes that cannot fit are refused with the estimate, before any allocation.
TEST(HostileCli, ModelsThatCannotFitAreRefusedWithAnEstimate) {
  for (const std::string flags : {"--layers 2147483647", "--layers 1000000 --hidden 1024"}) {
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = meshscope("run --backend cpu " + flags);
    EXPECT_NE(r.status, 0) << flags;
    EXPECT_NE(r.err.find("this run needs about "), std::string::npos) << flags << ": " << r.err;
    EXPECT_NE(r.err.find("of memory available"), std::string::npos) << r.err;
    EXPECT_LT(seconds_since(t0), 5) << flags;
  }
}

// Case 8: control bytes and huge tokens from a schedule file are escaped and cut, printed once.
TEST(HostileCli, UntrustedBytesInMessagesAreEscapedAndShort) {
  const fs::path evil = dir() / "evil.sched";
  {
    std::ofstream f(evil, std::ios::binary);
    f << "mesh pp=1\nmicrobatches 1\nrank 0: 0F0\x1b]0;owned\x07" << '\0' << "\n";
  }
  const Result r = meshscope("validate " + evil.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("\\x1b]0;owned\\x07\\x00"), std::string::npos) << r.err;
  for (const char c : r.err) {
    if (c != '\n') {
      EXPECT_GE(static_cast<unsigned char>(c), 0x20) << r.err;
    }
  }
  const fs::path huge = dir() / "huge.sched";
  std::ofstream(huge) << "mesh pp=1\nmicrobatches 1\nrank 0: 0" << std::string(10'000'000, 'Q')
                      << "\n";
  const Result h = meshscope("validate " + huge.string());
  EXPECT_NE(h.status, 0);
  EXPECT_LT(h.err.size(), 1000u) << h.err.substr(0, 1000);
  EXPECT_EQ(count(h.err, "meshscope: error:"), 1u) << h.err.substr(0, 1000);
  // A file name that is not UTF-8 is no reason to refuse its trace as JSON (the JSON library's
  // own message before): the byte comes out as U+FFFD.
  const fs::path odd = dir() / "odd\xff.json";
  fs::copy_file(small_trace(), odd, fs::copy_options::overwrite_existing);
  const Result j = meshscope("analyze --json '" + odd.string() + "'");
  EXPECT_EQ(j.status, 0) << j.err;
  EXPECT_NE(j.out.find("odd\xef\xbf\xbd.json"), std::string::npos) << j.out.substr(0, 400);
}

// Case 11: one exit-code rule; an unknown subcommand is named and the commands listed.
TEST(HostileCli, NothingUsableReadIsAnErrorEverywhere) {
  const fs::path empty = dir() / "empty.json", no_ph = dir() / "no_ph.json";
  std::ofstream(empty) << R"({"traceEvents":[]})";
  std::ofstream(no_ph) << R"({"traceEvents":[{"name":"a","ts":1,"dur":2,"pid":0,"tid":0}]})";
  for (const fs::path& p : {empty, no_ph}) {
    const Result a = meshscope("analyze " + p.string());
    EXPECT_NE(a.status, 0) << p;
    EXPECT_NE(a.err.find("no usable spans"), std::string::npos) << a.err;
    const fs::path out = dir() / "converted.json";
    fs::remove(out);
    const Result c = meshscope("convert " + p.string() + " -o " + out.string());
    EXPECT_NE(c.status, 0) << p;
    EXPECT_FALSE(fs::exists(out)) << "nothing usable: nothing written";
  }
  const Result unknown = meshscope("frobnicate");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("run, demo, schedules, validate"), std::string::npos) << unknown.err;
}

// Device activities that all last 0 ns at one instant make a window of no time: the table's 0 ns
// and 0% idle would read as a busy device, so analyze says what the window is.
TEST(HostileCli, AWindowOfNoTimeIsSaidToBeOne) {
  const fs::path in = dir() / "all_zero.json";
  std::ofstream(in) << R"({"traceEvents":[{"name":"k0","ph":"X","ts":0,"dur":0,"pid":1,"tid":1,)"
                    << R"("cat":"kernel","args":{"device":0,"stream":7}}]})";
  const Result a = meshscope("analyze " + in.string());
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("lasts 0 ns at one instant: a window of no time"), std::string::npos)
      << a.out;
}

// An event skipped on reading is said the same way by every command that reads traces: as
// meshscope's warning, with the byte where the first such event starts; the rest is still used.
TEST(HostileCli, SkippedEventsAreWarnedAlikeByAnalyzeAndConvert) {
  const fs::path in = dir() / "one_negative.json", out = dir() / "one_negative_out.json";
  std::ofstream(in) << R"({"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":0,"tid":0},)"
                    << R"({"ph":"X","name":"b","ts":5,"dur":-1,"pid":0,"tid":0}]})";
  const std::string said =
      "meshscope: warning: 1 event with a negative duration skipped (first at byte 69)";
  const Result a = meshscope("analyze " + in.string());
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find(said), std::string::npos) << a.err;
  const Result c = meshscope("convert " + in.string() + " -o " + out.string());
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find(said), std::string::npos) << c.err;
  EXPECT_TRUE(fs::exists(out));
}

// An option of one of predict's modes given without the mode was ignored: `--schedule gpipe` beside
// --config printed the config's own schedule as if it were GPipe's. Each is refused, naming the
// mode.
TEST(HostileCli, PredictOptionsOfAModeNotAskedForAreRefused) {
  const std::string config =
      std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/korthikanti-22b.json";
  const std::pair<const char*, const char*> cases[] = {
      {"--schedule gpipe", "--schedule requires --from-trace"},
      {"--microbatches 4", "--microbatches requires --from-trace"},
      {"--pp 4", "--pp requires --from-trace"},
      {"--gpus 16", "--gpus requires --search"},
      {"--top 3", "--top requires --search"},
      {"--sensitivity-percent 5", "--sensitivity-percent requires --sensitivity"}};
  for (const auto& [option, message] : cases) {
    const Result r = meshscope("predict --config " + config + " " + option);
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_NE(r.err.find(message), std::string::npos) << option << ": " << r.err;
    EXPECT_EQ(r.out, "") << option;
  }
  // With its mode, the same option is taken.
  const Result top = meshscope("predict --config " + config + " --search --gpus 8 --top 1");
  EXPECT_EQ(top.status, 0) << top.err;
  // A replay prices the job from its own traces: a calibration would be ignored (it was).
  const Result replay = meshscope("predict --from-trace " + std::string(MESHSCOPE_SOURCE_DIR) +
                                  "/tests/fixtures/torch/1F1B --calibration any.json");
  EXPECT_EQ(replay.status, 2);  // options that do not go together: a usage error
  EXPECT_NE(replay.err.find("--calibration goes with --config"), std::string::npos) << replay.err;
  // Options that do not go together are the command line's error, exit 2 (it had been 1).
  const std::string trace = std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/torch/1F1B";
  for (const std::string& args :
       {"predict --from-trace " + trace + " --csv x.csv",
        "predict --from-trace " + trace + " --plot x.svg",
        "predict --config " + config + " --search --gpus 8 --plot x.svg",
        "predict --config " + config + " --search", "calibrate " + trace,
        std::string("calibrate --gemm-rates ") + MESHSCOPE_SOURCE_DIR +
            "/tests/fixtures/xla/h100_bf16_matmul.csv --hardware h100-sxm --fp8 --held-rates " +
            MESHSCOPE_SOURCE_DIR + "/tests/fixtures/azure/nd_h100_v5_fp8.csv"}) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

// Case 7: concurrent writers of one path all succeed; the file is always whole.
TEST(HostileCli, ConcurrentWritersOfOnePathAllSucceed) {
  const fs::path out = dir() / "concurrent.sched";
  const std::string one = kMeshscope + " schedules --dump 1f1b --pp 4 --microbatches 64 -o " +
                          out.string() + " || echo FAILED";
  std::string script = "for i in 1 2 3 4 5; do ";
  for (int w = 0; w < 6; ++w) script += "(" + one + ") & ";
  script += "wait; done";
  const Result r = shell(script);
  EXPECT_EQ(count(r.out, "FAILED"), 0u) << r.err;
  EXPECT_EQ(r.err.find("cannot"), std::string::npos) << r.err;
  EXPECT_EQ(meshscope("validate -q " + out.string()).status, 0);
  for (const auto& e : fs::directory_iterator(dir())) {
    EXPECT_EQ(e.path().filename().string().find("concurrent.sched.tmp"), std::string::npos)
        << e.path();
  }
}

// Case 12: a schedule whose forward runs before its input arrived fails instead of computing on
// a stale buffer and exiting 0.
TEST(HostileCli, AForwardWhoseInputNeverArrivedFailsTheRun) {
  const std::string file =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/hostile/missing_recv.sched";
  EXPECT_NE(meshscope("validate " + file).status, 0);
  const Result r =
      meshscope("run --schedule-file " + file + " --no-validate --no-check --layers 2 --timeout 5");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.err.find("rank 1 at action 0 '1F0': its input activations never arrived: no "
                       "RECV_F of microbatch 0 ran before it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("loss"), std::string::npos) << r.out;
}

// Case 12b: a send no receive matches fails the run: the next step's receive had taken that
// message in place of its own (a wrong loss, exit 0), and with one step it was left unnoticed.
TEST(HostileCli, ASendNoReceiveMatchesFailsTheRun) {
  const std::string file =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/hostile/extra_send.sched";
  // The validator names the extra send's line and column.
  EXPECT_NE(meshscope("validate " + file)
                .err.find("extra_send.sched:8:69: rank 0 (dp0 pp0 tp0) "
                          "step 8 (0SEND_F0@1): repeated work"),
            std::string::npos);
  for (const char* steps : {"1", "2"}) {
    const Result r = meshscope("run --schedule-file " + file +
                               " --no-validate --no-check --layers 2 --timeout 5 --steps " + steps);
    EXPECT_EQ(r.status, 1) << steps << ": " << r.out;
    EXPECT_NE(r.err.find("meshscope: error: rank 1: " +
                         std::string(steps == std::string("1") ? "1 message sent to it was"
                                                               : "2 messages sent to it were") +
                         " never received (one from rank 0, "),
              std::string::npos)
        << steps << ": " << r.err;
  }
}

// An input path given empty (an unset "$F" in a script) is refused as the command line's error:
// `run --schedule-file ''` ran the default schedule and reported success, `simulate
// --schedule-file ''` and `predict --calibration ''` ignored the option, `schedules --from ''`
// listed the families.
TEST(HostileCli, AnEmptyInputPathIsRefusedNotTakenAsNoneGiven) {
  const std::string config =
      std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/korthikanti-175b.json";
  for (const auto& [args, option] :
       {std::pair{std::string("run --schedule-file ''"), "--schedule-file"},
        std::pair{"simulate --config " + config + " --schedule-file ''", "--schedule-file"},
        std::pair{"predict --config " + config + " --calibration ''", "--calibration"},
        std::pair{std::string("predict --config ''"), "--config"},
        std::pair{std::string("predict --from-trace ''"), "--from-trace"},
        std::pair{std::string("schedules --from ''"), "--from"},
        std::pair{std::string("schedules --from-trace ''"), "--from-trace"},
        std::pair{std::string("calibrate --gemm-rates '' --hardware h100-sxm"), "--gemm-rates"},
        // The files a command reads as its arguments (exit 1, "': no such file" before).
        std::pair{std::string("analyze ''"), "TRACE"},
        std::pair{std::string("analyze ") + config + " ''", "TRACE"},
        std::pair{std::string("convert '' -o x.json"), "TRACE"},
        std::pair{std::string("calibrate '' -o x.json"), "TRACE"},
        std::pair{std::string("validate ''"), "FILE"}}) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(std::string("meshscope: error: ") + option + ": the path is empty"),
              std::string::npos)
        << args << "\n"
        << r.err;
  }
}

// A number option given an empty value or, where it takes an integer, a number that is not whole
// is named for that, before its range check: CLI11 had read "" as 0 ("microbatches must be >= 1,
// got 0") and reported "2.0" as out of a range that holds 2.
TEST(HostileCli, ANumberOptionSaysWhenItsValueIsNoNumber) {
  for (const auto& [args, said] : {
           std::pair{"run -m ''", "--microbatches: an empty value is no number"},
           std::pair{"run --lr ''", "--lr: an empty value is no number"},
           std::pair{"run --pp 2.0", "--pp: '2.0' is not a whole number"},
           std::pair{"run --layers 1e3", "--layers: '1e3' is not a whole number"},
           std::pair{"predict --search --gpus 8 --top 1.5 --config x.json",
                     "--top: '1.5' is not a whole number"},
           std::pair{"analyze --kernels '' x.json", "--kernels: an empty value is no number"},
           // Past an int, the range is named where CLI11 said only "Could not convert".
           std::pair{"run -m 2147483648",
                     "--microbatches: Value 2147483648 not in range 1 to 1048576"},
           std::pair{"run --batch 2147483648",
                     "--batch: Value 2147483648 not in range 1 to 2147483647"},
           std::pair{"run --lr nan", "--lr: a learning rate is in (0, 100), got nan"},
           std::pair{"run --lr 0", "--lr: a learning rate is in (0, 100), got 0"},
           std::pair{"run --steps 0", "--steps: Value 0 not in range 1 to 1048576"},
           // A Chrome trace named as another format, which tools going by the name misread: the
           // same refusal from every command that writes one (it had been convert's alone).
           std::pair{"run --out r.sqlite",
                     "--out: 'r.sqlite': a Chrome trace (JSON) is written here, not .sqlite"},
           std::pair{"run --replay-trace r.PFTRACE",
                     "--replay-trace: 'r.PFTRACE': a Chrome trace (JSON) is written here, not "
                     ".pftrace"},
           std::pair{"simulate --config x.json --out s.json.zst",
                     "--out: 's.json.zst': a Chrome trace (JSON) is written here, not .zst"},
           std::pair{"convert x.json -o c.tar.gz",
                     "--out: 'c.tar.gz': a Chrome trace (JSON) is written here, not .tar.gz"},
       }) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind(std::string("meshscope: error: ") + said, 0), 0u)
        << args << ": " << r.err;
  }
}

}  // namespace
