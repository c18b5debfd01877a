// `meshscope` and its scripts as a user new to them meets them (an audit from nsys / HTA /
// Perfetto habits): no command given, -o on every command that writes a file, output folders
// refused before any work with the exit status 2 of every refused output, option values refused
// on their own, and the scripts' --help and missing arguments. Each case runs the built binary or
// the script.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"

namespace {

namespace fs = std::filesystem;

using meshscope::cli_testing::read_file;
using meshscope::cli_testing::Result;
using meshscope::cli_testing::shell;

const std::string kMeshscope = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const std::string kScripts = std::string(MESHSCOPE_SOURCE_DIR) + "/scripts";

fs::path dir() {
  static const fs::path d = meshscope::cli_testing::temp_dir("first_use");
  return d;
}

Result meshscope(const std::string& args) { return shell(kMeshscope + " " + args); }

// A config small enough to simulate at once.
std::string small_config() {
  const fs::path p = dir() / "small.json";
  if (!fs::exists(p)) {
    std::ofstream(p) << R"({"model":{"kind":"gpt","layers":4,"hidden":256,"heads":4,)"
                        R"("seq":128,"vocab":1000},"mesh":{"pp":2},)"
                        R"("batch":{"micro":1,"global":4},"schedule":"1f1b"})";
  }
  return p.string();
}

// A small valid trace of two ranks.
std::string small_trace() {
  const fs::path p = dir() / "two_ranks.json";
  if (!fs::exists(p)) {
    std::ofstream(p) << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,)"
                        R"("ts":1,"dur":2},{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":7,)"
                        R"("ts":4,"dur":2}]})";
  }
  return p.string();
}

// The line that starts stderr.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// `meshscope` alone names the commands, as a mistyped one does (CLI11 said only "A subcommand is
// required").
TEST(FirstUseCli, NoCommandListsTheCommands) {
  const Result r = meshscope("");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(first_line(r.err),
            "meshscope: error: give a command: run, demo, schedules, validate, analyze, simulate, "
            "predict, calibrate, convert, catalog (see --help)");
  EXPECT_EQ(r.out, "");
}

// simulate writes its trace with -o as run, demo, schedules, calibrate and convert do (it was
// refused: "The following arguments were not expected: x.json -o").
TEST(FirstUseCli, SimulateTakesDashOAsEveryCommandThatWritesATrace) {
  const fs::path out = dir() / "sim_dash_o.json";
  const Result r = meshscope("simulate --config " + small_config() + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(out).rfind("{", 0), 0u);
  // And refuses what --out refuses, under its long name.
  const Result bad = meshscope("simulate --config " + small_config() + " -o /nonexistent/s.json");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(first_line(bad.err).rfind("meshscope: error: --out: cannot write", 0), 0u) << bad.err;
}

// Arguments the parser did not expect are listed as typed: CLI11 listed them last first, so that
// `--micro 4` read "not expected: 4 --micro", as if 4 were the option.
TEST(FirstUseCli, ArgumentsNotExpectedAreListedAsTyped) {
  for (const auto& [args, said] :
       {std::pair{"schedules --dump 1f1b --micro 4",
                  "The following arguments were not expected: --micro 4"},
        std::pair{"run --bogus=3 -z", "The following arguments were not expected: --bogus=3 -z"},
        std::pair{"catalog h100-sxm a100-80gb b200-sxm",
                  "The following arguments were not expected: a100-80gb b200-sxm"},
        std::pair{"catalog h100-sxm a100-80gb",
                  "The following argument was not expected: a100-80gb"}}) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(first_line(r.err), std::string("meshscope: error: ") + said) << args;
  }
}

// A schedule is written only under a name its readers take for what it holds: schedule text named
// .csv (torch's CSV to the readers: `validate` said "not a torch action: '# meshscope schedule
// v1'" of what run and simulate had written), and either form named as a trace, .json or .gz,
// which analyze and the viewer read from a folder as a rank's trace (and which is not compressed).
// `schedules` had refused the first alone.
TEST(FirstUseCli, ASchedulesNameSaysWhatItHolds) {
  const std::string out = dir().string();
  for (const auto& [args, said] : {
           std::pair{"run --dump-schedule " + out + "/ran.csv",
                     "--dump-schedule: '" + out +
                         "/ran.csv': a .csv file is read as torch's CSV, "
                         "but schedule text is written here: name it .sched"},
           std::pair{"simulate --config " + small_config() + " --schedule-out " + out + "/sim.CSV",
                     "--schedule-out: '" + out +
                         "/sim.CSV': a .csv file is read as torch's CSV, "
                         "but schedule text is written here: name it .sched"},
           std::pair{"run --dump-schedule " + out + "/ran.json",
                     "--dump-schedule: '" + out +
                         "/ran.json': a schedule is written here, not a "
                         "trace (.json): name it .sched"},
           std::pair{"schedules --dump 1f1b -o " + out + "/s.json",
                     "--out: '" + out +
                         "/s.json': a schedule is written here, not a trace "
                         "(.json): name it .sched"},
           std::pair{"schedules --dump 1f1b --format torch-csv -o " + out + "/s.csv.gz",
                     "--out: '" + out +
                         "/s.csv.gz': a schedule is written here, not a trace "
                         "(.gz): name it .csv"},
       }) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(first_line(r.err), "meshscope: error: " + said) << args;
  }
  for (const char* name : {"ran.csv", "sim.CSV", "ran.json", "s.json", "s.csv.gz"})
    EXPECT_FALSE(fs::exists(dir() / name)) << name;
}

// An empty --diff is refused as every empty input path is (it was ignored: the file alone was
// validated and the command said nothing of the difference asked for).
TEST(FirstUseCli, AnEmptyDiffPathIsRefused) {
  const fs::path sched = dir() / "diff.sched";
  ASSERT_EQ(meshscope("schedules --dump 1f1b --pp 2 -m 2 -o " + sched.string()).status, 0);
  const Result r = meshscope("validate " + sched.string() + " --diff ''");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(first_line(r.err), "meshscope: error: --diff: the path is empty");
  EXPECT_EQ(r.out, "");
}

// demo's output folder is refused with 2, the status of every refused output (it had been 1), and
// before the first run.
TEST(FirstUseCli, DemoRefusesAnOutputFolderItCannotUseWithTwo) {
  const fs::path file = dir() / "a_file";
  std::ofstream(file) << "x";
  for (const auto& [out, said] :
       {std::pair{std::string("''"), std::string("-o/--out: the output folder is empty")},
        std::pair{file.string(),
                  "-o/--out: cannot create the output folder " + file.string() + ": "}}) {
    const Result r = meshscope("demo --steps 1 --out " + out);
    EXPECT_EQ(r.status, 2) << out << ": " << r.err;
    EXPECT_EQ(r.err.find("meshscope: error: " + said), 0u) << r.err;
    EXPECT_EQ(r.out.find("meshscope demo:"), std::string::npos) << r.out;
  }
  EXPECT_EQ(read_file(file), "x");
}

// convert --per-rank's folder is checked with the command line: a folder in a missing one is
// refused with 2 before the traces are read (1, after the import, before).
TEST(FirstUseCli, ConvertPerRankChecksItsFolderFirst) {
  const fs::path folder = dir() / "missing" / "ranks";
  const Result r = meshscope("convert " + small_trace() + " --per-rank -o " + folder.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(first_line(r.err), "meshscope: error: --out: cannot write '" + folder.string() +
                                   "': folder '" + (dir() / "missing").string() +
                                   "': No such file or directory");
  EXPECT_FALSE(fs::exists(dir() / "missing"));
  // A new folder beside the trace, and the same folder again, are written.
  const fs::path ranks = dir() / "ranks";
  for (int i = 0; i < 2; ++i) {
    const Result ok = meshscope("convert " + small_trace() + " --per-rank -o " + ranks.string());
    EXPECT_EQ(ok.status, 0) << ok.err;
  }
  EXPECT_TRUE(fs::exists(ranks / "rank0.json"));
  EXPECT_TRUE(fs::exists(ranks / "rank1.json"));
}

// Values refused on their own get 2 and a line saying what is wanted: a capacity factor that is no
// positive number (1, from the workload's check, before), and --sensitivity-percent out of its
// range ("Value 0 not in range 1.000000 to 50.000000").
TEST(FirstUseCli, ValuesRefusedOnTheirOwnSayWhatIsWanted) {
  for (const std::string factor : {"nan", "0", "-1", "inf", "1e30"}) {
    const Result r = meshscope("run --model moe --capacity-factor " + factor);
    EXPECT_EQ(r.status, 2) << factor;
    EXPECT_EQ(first_line(r.err),
              "meshscope: error: --capacity-factor: a capacity factor is above 0 and at most "
              "--experts, got " +
                  factor);
  }
  for (const std::string percent : {"0", "51", "nan"}) {
    const Result r = meshscope("predict --config " + small_config() +
                               " --sensitivity --sensitivity-percent " + percent);
    EXPECT_EQ(r.status, 2) << percent;
    EXPECT_EQ(first_line(r.err),
              "meshscope: error: --sensitivity-percent: a percent in [1, 50], got " + percent);
  }
}

// Two files that claim one rank are refused with the advice `--rank-from file-order`; every
// command that reads a job's files into one timeline takes it (analyze alone did: convert and
// calibrate refused the option the error had just suggested).
TEST(FirstUseCli, TheRankFromTheImportSuggestsIsAnOptionOfEachCommandThatReadsAJob) {
  const fs::path job = dir() / "one_rank_twice";
  fs::create_directories(job);
  for (const char* name : {"a.json", "b.json"}) {
    std::ofstream(job / name)
        << R"({"distributedInfo":{"rank":0,"world_size":2},"traceEvents":[{"ph":"X",)"
           R"("cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,)"
           R"("args":{"device":0,"stream":7}}]})";
  }
  const fs::path merged = dir() / "one_rank_twice.json";
  const std::string convert = "convert " + job.string() + " -o " + merged.string();
  const Result refused = meshscope(convert);
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("--rank-from file-order"), std::string::npos) << refused.err;
  const Result converted = meshscope(convert + " --rank-from file-order");
  EXPECT_EQ(converted.status, 0) << converted.err;
  EXPECT_NE(converted.out.find("2 devices"), std::string::npos) << converted.out;
  EXPECT_EQ(meshscope("analyze " + job.string() + " --rank-from file-order").status, 0);

  // A PyTorch profile's NCCL kernels, one rank's file twice: the collective link fits.
  const fs::path nccl_job = dir() / "nccl_rank_twice";
  fs::create_directories(nccl_job);
  const fs::path fixture =
      fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";
  for (const char* name : {"a.json.gz", "b.json.gz"})
    fs::copy_file(fixture, nccl_job / name, fs::copy_options::overwrite_existing);
  const std::string calibrate = "calibrate " + nccl_job.string() + " --hardware a100-80gb -o " +
                                (dir() / "nccl.json").string();
  EXPECT_NE(meshscope(calibrate).err.find("--rank-from file-order"), std::string::npos);
  const Result fitted = meshscope(calibrate + " --rank-from file-order");
  EXPECT_EQ(fitted.status, 0) << fitted.err;
  EXPECT_TRUE(fs::exists(dir() / "nccl.json"));
  // GEMM rates are read per file: the option is refused there, not ignored.
  const Result gemm = meshscope("calibrate --gemm-rates " + fixture.string() +
                                " --hardware a100-80gb --rank-from file-order");
  EXPECT_EQ(gemm.status, 2);
  EXPECT_EQ(first_line(gemm.err), "meshscope: error: --rank-from excludes --gemm-rates");
}

// The scripts a user runs with arguments: --help prints the usage and exits 0; an option where a
// folder goes is refused, not taken for one (make-torch-fixtures.sh --help had started a 2 GB
// install of torch on its way to writing fixtures into ./--help; TORCH_PYTHON=/bin/false ends any
// such run at once); missing arguments are one line and 2.
TEST(FirstUseCli, ScriptsTakeHelpAndRefuseMissingArguments) {
  const std::string in_dir = "cd '" + dir().string() + "' && TORCH_PYTHON=/bin/false ";
  const Result help = shell(in_dir + kScripts + "/make-torch-fixtures.sh --help");
  EXPECT_EQ(help.status, 0) << help.err;
  EXPECT_NE(help.out.find("scripts/make-torch-fixtures.sh [OUT_DIR]"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir() / "--help"));
  const Result unknown = shell(in_dir + kScripts + "/make-torch-fixtures.sh -x");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(first_line(unknown.err).rfind("make-torch-fixtures: unknown option '-x'", 0), 0u)
      << unknown.err;

  const std::string table = kScripts + "/torch-accuracy-table.sh";
  EXPECT_EQ(shell(table + " --help").status, 0);
  for (const std::string args : {"", "--bin"}) {
    const Result r = shell(table + " " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, "") << args;  // no table header before the error
    EXPECT_EQ(r.err.find("torch-accuracy-table: "), 0u) << r.err;
  }
  const Result missing = shell(table + " " + (dir() / "no_job").string());
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_NE(missing.err.find("no_job: not a folder"), std::string::npos) << missing.err;
}

}  // namespace
