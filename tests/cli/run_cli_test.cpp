// `meshscope run`, `demo`, `schedules` and `validate` as a user calls them: exit codes, one-line
// errors, the trace files they write and what `analyze` reads back from them.
#include <gtest/gtest.h>

#include "cli_test_util.h"

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace {

namespace fs = std::filesystem;

using meshscope::cli_testing::read_file;
using meshscope::cli_testing::Result;
using meshscope::cli_testing::temp_dir;

// Runs `meshscope ARGS`; `shell_prefix` runs first in the same shell (e.g. "ulimit -v 1000000;").
Result meshscope(const std::string& args, const std::string& shell_prefix = "") {
  return meshscope::cli_testing::shell(shell_prefix + std::string(MESHSCOPE_BINARY_DIR) +
                                       "/meshscope " + args);
}

TEST(RunCli, OneFOneBTraceIsValidAndAnalyzeReportsBubblesPerDevice) {
  const fs::path dir = temp_dir("1f1b");
  const fs::path trace = dir / "run.json";
  const Result run = meshscope(
      "run --schedule 1f1b --pp 4 --microbatches 8 --model mlp --layers 4 "
      "--hidden 64 --steps 1 --backend cpu --out " +
      trace.string());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("equal"), std::string::npos) << run.out;

  const auto doc = nlohmann::json::parse(read_file(trace));  // throws on invalid JSON
  ASSERT_TRUE(doc.contains("traceEvents"));
  int complete = 0, idle = 0, flows = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    if (ph == "X") {
      ++complete;
      EXPECT_GE(e["dur"].get<double>(), 0);
      if (e.value("cat", "") == "idle") ++idle;
    }
    if (ph == "s" || ph == "f") ++flows;
  }
  EXPECT_GT(complete, 4 * 8 * 2);  // at least every F and B of every microbatch on every rank
  EXPECT_GT(idle, 0);              // a pipeline has bubbles
  EXPECT_GT(flows, 0);             // sends are linked to their recvs

  const Result analyze = meshscope("analyze --json " + trace.string());
  ASSERT_EQ(analyze.status, 0) << analyze.err;
  const auto a = nlohmann::json::parse(analyze.out);
  ASSERT_EQ(a["devices"].size(), 4u);
  for (const auto& d : a["devices"]) {
    EXPECT_GT(d["bubble_fraction"].get<double>(), 0.0);
    EXPECT_LT(d["bubble_fraction"].get<double>(), 1.0);
    EXPECT_FALSE(d["peak_activation_bytes"].is_null());
  }
  fs::remove_all(dir);
}

TEST(RunCli, JsonSummaryReportsEquivalenceWithOneDevice) {
  const Result r = meshscope(
      "run --schedule interleaved --pp 2 -m 4 --model mlp --layers 4 "
      "--hidden 32 --steps 2 --backend cpu --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["equal_to_one_device"].get<bool>());
  EXPECT_EQ(j["virtual_stages"], 2);
  EXPECT_EQ(j["losses"].size(), 2u);
}

TEST(RunCli, ADivergedRunIsNeitherEqualToOneDeviceNorASuccess) {
  // lr 99 drives the loss to inf and then NaN within a few steps, on one device as on two; a NaN
  // used to slip through the comparison and be reported "equal".
  const std::string args =
      "run --lr 99 --steps 8 --model mlp --layers 2 --hidden 16 --pp 2 -m 2 "
      "--backend cpu";
  const Result r = meshscope(args);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("meshscope: error: training diverged: the loss of step ", 0), 0u) << r.err;
  EXPECT_EQ(r.out.find("equal ("), std::string::npos) << r.out;
  const Result j = meshscope(args + " --json");
  EXPECT_EQ(j.status, 1);
  const nlohmann::json run = nlohmann::json::parse(j.out);
  EXPECT_FALSE(run["equal_to_one_device"].get<bool>());
  // The step is counted from 1, as the progress lines count it ("step 1 of 8"): the first whose
  // loss is null (not finite).
  size_t first = 0;
  while (first < run["losses"].size() && !run["losses"][first].is_null()) ++first;
  ASSERT_LT(first, run["losses"].size());
  EXPECT_NE(r.err.find("the loss of step " + std::to_string(first + 1) + " of 8 is "),
            std::string::npos)
      << r.err << run["losses"];
}

TEST(RunCli, AReplicaThatSkipsItsUpdateDiffers) {
  // dp 2 where replica 1 never runs its optimizer step (--no-validate lets the file through):
  // replica 0's weights equal one device's and the loss of one step is computed before any
  // update, so only replica 1's own weights show it. They had not been compared.
  const fs::path dir = temp_dir("replica_skips_step");
  const fs::path dump = dir / "dp2.sched";
  ASSERT_EQ(meshscope("schedules --dump dp --dp 2 -m 2 -o " + dump.string()).status, 0);
  std::string text = read_file(dump);
  const size_t rank1 = text.find("rank 1:");
  ASSERT_NE(rank1, std::string::npos) << text;
  const size_t step = text.find(" 0STEP", rank1);
  ASSERT_NE(step, std::string::npos) << text;
  text.erase(step, 6);
  const fs::path edited = dir / "no_step_on_rank1.sched";
  std::ofstream(edited) << text;
  const Result r = meshscope("run --schedule-file " + edited.string() +
                             " --no-validate --model mlp --layers 2 --hidden 32 --batch 8 "
                             "--steps 1 --backend cpu");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DIFFERS"), std::string::npos) << r.out;
  // The file as dumped is equal.
  EXPECT_EQ(meshscope("run --schedule-file " + dump.string() +
                      " --model mlp --layers 2 --hidden 32 --batch 8 --steps 1 --backend cpu")
                .status,
            0);
}

TEST(RunCli, FlagsThatWouldBeSilentlyIgnoredOrChangedAreRefused) {
  // --no-validate only applies to a schedule file; a seed past 2^64 - 1 had become 2^64 - 1.
  const Result nv = meshscope("run --pp 2 -m 2 --no-validate");
  EXPECT_NE(nv.status, 0);
  EXPECT_NE(nv.err.find("--no-validate requires --schedule-file"), std::string::npos) << nv.err;
  const Result seed = meshscope("run --pp 2 -m 2 --seed 18446744073709551616");
  EXPECT_NE(seed.status, 0);
  EXPECT_NE(seed.err.find("a seed is at most 18446744073709551615"), std::string::npos) << seed.err;
  // A capacity factor just past the limit is quoted as given, not rounded onto the limit.
  const Result cf = meshscope("run --model moe --experts 2 --capacity-factor 2.0000001");
  EXPECT_EQ(cf.status, 1);
  EXPECT_NE(cf.err.find("got 2.0000001"), std::string::npos) << cf.err;
}

TEST(RunCli, MoreRankThreadsThanTheMachineStartsAreRefusedAtOnce) {
  // A million ranks of one process: set-up had run for minutes through gigabytes before any
  // thread failed to start. One rank more than kernel.pid_max and kernel.threads-max allow.
  int64_t limit = INT64_MAX;
  for (const char* f : {"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"}) {
    std::ifstream in(f);
    int64_t v = 0;
    if (in >> v && v > 0) limit = std::min(limit, v);
  }
  if (limit >= 1048576) GTEST_SKIP() << "this machine starts more threads than --dp takes";
  const std::string ranks = std::to_string(limit + 1);
  const Result r = meshscope("run --schedule dp --dp " + ranks + " -m 1 --batch " + ranks +
                             " --model mlp --layers 1 --hidden 1");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(ranks + " ranks need a thread each"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kernel.pid_max"), std::string::npos) << r.err;
}

TEST(RunCli, WeightsThatOverflowOnOneDeviceTooAreDivergenceNotADifference) {
  // lr 5 takes the chain's weights to inf in four steps while its loss stays finite: the run and
  // the one-device reference both overflow, which says nothing about the schedule.
  const std::string args = "run --model chain --pp 1 -m 1 --steps 4 --lr 5 --backend cpu";
  const Result r = meshscope(args);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("meshscope: error: training diverged: the one-device run's weights are "
                        "no longer finite after 4 step(s)",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.out.find("diverged on one device"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DIFFERS"), std::string::npos) << r.out;
  const Result j = meshscope(args + " --json");
  EXPECT_TRUE(nlohmann::json::parse(j.out)["one_device_diverged"].get<bool>());
  // Three steps stay finite, and equal.
  EXPECT_EQ(meshscope("run --model chain --pp 1 -m 1 --steps 3 --lr 5 --backend cpu").status, 0);
}

TEST(RunCli, TwoOutputsNamingOneFileAreRefusedBeforeTheRun) {
  const fs::path dir = temp_dir("run_same_output");
  const std::string trace = (dir / "same.json").string();
  // The same file by two spellings: the replay trace would silently replace the run's.
  const Result r = meshscope("run --hidden 16 --steps 1 --pp 4 -m 4 --out " + trace +
                             " --replay-trace " + (dir / "." / "same.json").string());
  EXPECT_EQ(r.status, 2);  // a command line refused: the parser's status
  EXPECT_EQ(r.err.rfind("meshscope: error: --out and --replay-trace name the same file", 0), 0u)
      << r.err;
  EXPECT_FALSE(fs::exists(trace));
  // A trace and a schedule under one name that suits both (a schedule is no .json).
  const std::string both = (dir / "same.out").string();
  EXPECT_EQ(
      meshscope("run --hidden 16 --steps 1 --out " + both + " --dump-schedule " + both).status, 2);
  const Result sim = meshscope("simulate --config " + std::string(MESHSCOPE_SOURCE_DIR) +
                               "/sim/predict/configs/korthikanti-22b.json --out " + both +
                               " --schedule-out " + both);
  EXPECT_EQ(sim.err, "meshscope: error: --out and --schedule-out name the same file '" + both +
                         "': one would replace the other\nRun with --help for more "
                         "information.\n");
  EXPECT_FALSE(fs::exists(trace));
  EXPECT_FALSE(fs::exists(both));
}

TEST(RunCli, ARunBeyondTheAddressSpaceLimitIsRefusedBeforeItStarts) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve more address space than the limit this test sets";
#else
  // 1 GiB of address space; h = 4096 needs 4h x h floats (256 MiB) per matrix, 1 GiB for the
  // weights of two blocks: more than the limit, though the machine could hold it. The estimate
  // before the run (cli/run_memory.h) reads the limit (traces::memory_limit) and refuses it in one
  // line naming it; before, it read only the machine's memory, let the run start, and the run
  // ended in "out of memory" when an allocation failed. 200,000 blocks of width 1 hold little
  // data but about 10 KB of tensor records each (2.4 GB in all); counted at 300 bytes a block,
  // they had been let through, to end in "rank 2: out of memory" seconds later.
  for (const std::string args : {"run --model mlp --layers 2 --hidden 4096 --pp 2 -m 2",
                                 "run --model mlp --layers 200000 --hidden 1 --steps 1"}) {
    const Result r = meshscope(args + " --backend cpu", "ulimit -v 1000000; ");
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_EQ(r.err.rfind("meshscope: error: this run needs about ", 0), 0u)
        << args << ": " << r.err;
    EXPECT_NE(r.err.find("(its address-space limit (ulimit -v) is 976.6 MiB)"), std::string::npos)
        << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
#endif
}

TEST(RunCli, BadArgumentsGiveOneLineErrorAndNonZeroExit) {
  for (const std::string args :
       {"run --schedule 1f1b --pp 4 --devices 8", "run --schedule interleaved --pp 4 -m 6",
        "run --schedule-file /nonexistent/file.sched"}) {
    const Result r = meshscope(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_EQ(r.err.rfind("meshscope: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
  // A name no schedule, model, backend or tracer has is the command line's error: exit 2, with
  // the parser's pointer to --help (they exited 1, as a failed run does).
  for (const std::string args : {"run --schedule nosuch", "run --model nosuch", "run --backend tpu",
                                 "run --tracer nosuch", "run --timeout 0", "run --timeout abc"}) {
    const Result r = meshscope(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind("meshscope: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find("\nRun with --help for more information.\n"), std::string::npos)
        << args << ": " << r.err;
  }
}

TEST(RunCli, AModelTooSmallForTheDefaultMeshSaysTheMeshWasTheDefault) {
  const Result r = meshscope("run --model chain --steps 1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("cannot split 3 layers into 4 stages"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the mesh dp=1 pp=4 tp=1 is the default when no --dp, --pp, --tp or "
                       "--devices is given)"),
            std::string::npos)
      << r.err;
  // A mesh given is the user's: nothing about defaults.
  EXPECT_EQ(meshscope("run --model chain --steps 1 --pp 5").err.find("is the default"),
            std::string::npos);
}

TEST(RunCli, MeshDimensionsBelowOneAreRefusedNotReplacedByDefaults) {
  // 0 used to mean "not given", so `--pp 0` silently ran on four pipeline ranks.
  // A negative seed would wrap around to 2^64 - 1.
  for (const std::string flag :
       {"--pp 0", "--dp 0", "--tp -2", "--devices 0", "--virtual 0", "--seed -1"}) {
    const Result r = meshscope("run --model chain --batch 4 --backend cpu " + flag);
    EXPECT_NE(r.status, 0) << flag << ": " << r.out;
    const std::string name = flag.substr(0, flag.find(' '));
    EXPECT_EQ(r.err.rfind("meshscope: error: " + name, 0), 0u) << flag << ": " << r.err;
    EXPECT_EQ(r.status, 2) << flag;  // a bad argument: the documented 2, not CLI11's 105
    EXPECT_EQ(r.out, "") << flag;
  }
}

// Flags the run would have no use for were ignored: a schedule file's own mesh beside --pp, the
// moe model's --top-k beside --model mlp. Each is refused, naming it.
TEST(RunCli, FlagsTheRunWouldIgnoreAreRefused) {
  const std::string file = std::string(MESHSCOPE_SOURCE_DIR) +
                           "/tests/fixtures/torch_orders/dualpipe-v_pp2_m4_v2.compute_comms.csv";
  const std::pair<std::string, std::string> cases[] = {
      {"--schedule-file " + file + " --schedule gpipe", "--schedule excludes --schedule-file"},
      {"--schedule-file " + file + " --pp 4", "--schedule-file excludes --pp"},
      {"--schedule-file " + file + " -m 4", "--schedule-file excludes --microbatches"},
      {"--model mlp --top-k 2", "--top-k applies to the moe model (--model moe), not to mlp"},
      {"--model mlp --experts 8", "--experts applies to the moe model"},
      {"--model chain --layers 4", "--layers applies to the mlp and moe models; chain has"},
      {"--model classifier --hidden 64", "--hidden applies to the mlp and moe models"}};
  for (const auto& [args, message] : cases) {
    const Result r = meshscope("run --backend cpu --steps 1 " + args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  const Result moe = meshscope("run --backend cpu --steps 1 --model moe --top-k 2 --pp 2");
  EXPECT_EQ(moe.status, 0) << moe.err;
}

// Whether this machine runs the GPU backends (then the no-GPU expectations do not apply).
bool gpu_backends_run() {
  return meshscope(
             "run --backend cuda-virtual --model chain --pp 3 -m 1 --batch 4 --steps 1 "
             "--no-check")
             .status == 0;
}

TEST(RunCli, GpuBackendsWithoutAGpuFailWithOneLine) {
  if (gpu_backends_run()) GTEST_SKIP() << "a GPU is present";
  for (const std::string backend : {"cuda", "cuda-virtual"}) {
    const Result r = meshscope("run --backend " + backend + " --model chain --pp 3 -m 1 --batch 4");
    EXPECT_EQ(r.status, 1) << backend;
    EXPECT_EQ(r.err.rfind("meshscope: error: ", 0), 0u) << backend << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << backend << ": " << r.err;
    EXPECT_EQ(r.out, "") << backend;
  }
}

TEST(RunCli, AutoFallsBackToCpuSayingSoOnce) {
  if (gpu_backends_run()) GTEST_SKIP() << "a GPU is present";
  const Result r = meshscope("run --backend auto --model chain --pp 3 -m 1 --batch 4 --steps 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.rfind("backend: cpu (no GPU", 0), 0u) << r.err;
  size_t mentions = 0;
  for (size_t at = r.err.find("backend:"); at != std::string::npos;
       at = r.err.find("backend:", at + 1)) {
    ++mentions;
  }
  EXPECT_EQ(mentions, 1u) << r.err;
  EXPECT_NE(r.out.find("backend cpu (3 threads)"), std::string::npos) << r.out;
}

TEST(RunCli, UnwritableTraceLeavesNoFileAndFails) {
  const Result r = meshscope(
      "run --schedule gpipe --pp 2 -m 2 --model chain --batch 4 --backend cpu "
      "--out /nonexistent_dir/run.json");
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(fs::exists("/nonexistent_dir/run.json"));
}

// A trace the run cannot write (here beyond the file-size limit, `ulimit -f`: meshscope ignores
// SIGXFSZ, so the write fails with EFBIG as one fails on a full disk): the run's figures are
// printed, then the error, exit 1, and no file. Before, the finished run's table and JSON were
// lost.
TEST(RunCli, ATraceThatCannotBeWrittenStillPrintsTheRunsFigures) {
  const fs::path trace = temp_dir("run_efbig") / "run.json";
  const std::string args =
      "run --schedule gpipe --pp 2 -m 2 --model chain --batch 4 --steps 1 "
      "--backend cpu --out " +
      trace.string();
  const std::string limited = "ulimit -f 8; ";
  const Result text = meshscope(args, limited);
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("equal"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find("trace: not written (cannot write " + trace.string() + ": File too large)"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.err.find("meshscope: error: cannot write " + trace.string()), std::string::npos)
      << text.err;
  EXPECT_FALSE(fs::exists(trace));
  const Result json = meshscope(args + " --json", limited);
  EXPECT_EQ(json.status, 1);
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(j["equal_to_one_device"].get<bool>());
  EXPECT_NE(j["output_error"].get<std::string>().find("File too large"), std::string::npos);
  EXPECT_FALSE(fs::exists(trace));
}

// "-" is not a file to run's outputs: refused before the run, as it had been written to a file
// named "-". A path ending in ".GZ" is compressed as ".gz" is.
TEST(RunCli, ADashIsNoOutputFileAndUpperCaseGzCompresses) {
  for (const char* option : {"--out", "--dump-schedule", "--replay-trace"}) {
    const Result r = meshscope(std::string("run --model chain --pp 3 ") + option + " -");
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_NE(r.err.find("'-' (standard output) is not taken here"), std::string::npos)
        << option << ": " << r.err;
  }
  const fs::path gz = temp_dir("run_upper_gz") / "run.JSON.GZ";
  const Result r = meshscope("run --model chain --pp 3 --steps 1 --out " + gz.string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(gz, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  EXPECT_EQ(magic[0], 0x1f);
  EXPECT_EQ(magic[1], 0x8b);
}

TEST(RunCli, HandWrittenScheduleRunsAndADeadlockingOneIsRejected) {
  const fs::path dir = temp_dir("sched");
  const fs::path good = dir / "good.sched";
  ASSERT_EQ(meshscope("schedules --dump gpipe --pp 2 -m 2 -o " + good.string()).status, 0);
  const Result ok = meshscope("run --schedule-file " + good.string() +
                              " --model mlp --layers 2 --hidden 16 --batch 8 --backend cpu");
  EXPECT_EQ(ok.status, 0) << ok.err;

  const fs::path bad = dir / "deadlock.sched";
  std::ofstream(bad) << "# meshscope schedule v1\nmesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
                        "rank 0: 0RECV_B0 0F0 0SEND_F0 0B0\n"
                        "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0\n";
  const Result r = meshscope("run --schedule-file " + bad.string() +
                             " --model mlp --layers 2 --hidden 16 --batch 8 --backend cpu");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("rank 0"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// Every file the demo writes is checked before its first run: a folder at summary.json failed
// after all ten runs (and none was written), a link at a run's trace after the runs before it.
// Refused with 2, as every output path the command line names that cannot be written.
TEST(DemoCli, AnOutputItCannotWriteFailsBeforeAnyRun) {
  const fs::path dir = temp_dir("demo_unwritable");
  fs::create_directories(dir / "summary.json");
  Result r = meshscope("demo --out " + dir.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("summary.json': it is a folder"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[1/"), std::string::npos) << "a run started: " << r.err;
  EXPECT_TRUE(fs::is_directory(dir / "summary.json"));  // left as it was
  fs::remove(dir / "summary.json");
  fs::create_symlink("/nonexistent", dir / "mesh-dp2-pp4.json");
  r = meshscope("demo --out " + dir.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("mesh-dp2-pp4.json': it is a symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[1/"), std::string::npos) << "a run started: " << r.err;
}

TEST(DemoCli, BadArgumentsFailBeforeAnyRunWithOneLine) {
  const fs::path dir = temp_dir("demo_bad");
  for (const std::string args : {"--timeout 0", "--timeout -1", "--backend tpu"}) {
    const Result r = meshscope("demo " + args + " --out " + dir.string());
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err.rfind("meshscope: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir / "summary.json")) << args;
  }
  // Out of an option's range: CLI11's usage error (exit 2), with its pointer to --help.
  const Result steps = meshscope("demo --steps 0 --out " + dir.string());
  EXPECT_EQ(steps.status, 2);
  EXPECT_EQ(steps.err.rfind("meshscope: error: --steps: Value 0 not in range 1 to 1048576\n", 0),
            0u)
      << steps.err;
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(DemoCli, RunsEveryFamilyWritesATracePerRunAndAllEqualOneDevice) {
  const fs::path dir = temp_dir("demo");
  // --cores 2: the runs of more than two ranks also show their replay from thread CPU time.
  const Result r = meshscope("demo --backend cpu --steps 1 --cores 2 --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(read_file(dir / "summary.json"));
  std::set<std::string> families;
  std::map<std::string, double> replayed;  // label -> replayed bubble
  for (const auto& run : summary) {
    families.insert(run["schedule"].get<std::string>());
    const bool more_ranks_than_cores = run["analysis"]["devices"].size() > 2;
    EXPECT_EQ(run.contains("cpu_time_replay"), more_ranks_than_cores) << run["label"];
    if (run.contains("cpu_time_replay")) {
      replayed[run["label"]] = run["cpu_time_replay"]["bubble_fraction"].get<double>();
    }
    EXPECT_TRUE(run["equal_to_one_device"].get<bool>()) << run["label"];
    EXPECT_TRUE(fs::exists(run["trace"].get<std::string>())) << run["label"];
  }
  for (const char* f : {"naive", "gpipe", "1f1b", "interleaved", "zb-h1", "tp", "dp"}) {
    EXPECT_TRUE(families.count(f)) << f;
  }
  EXPECT_NE(r.out.find("dp=2 pp=4 tp=1"), std::string::npos);  // the seed's 2-D mesh
  EXPECT_NE(r.out.find("cpu-time replay"), std::string::npos) << r.out;
  // Every pipeline run of 4 ranks has its replay; how close a replay of measured CPU time comes
  // to the schedules' closed forms depends on what else the machine runs, so that is a
  // measurement (bench/exec_cpu_time_replay_check.cpp), not asserted here.
  for (const char* label : {"gpipe-pp4", "1f1b-pp4", "interleaved-pp4", "zb-h1-pp4"}) {
    ASSERT_TRUE(replayed.count(label)) << label;
    EXPECT_GT(replayed.at(label), 0.0) << label;  // a pipeline always fills and drains
    EXPECT_LT(replayed.at(label), 1.0) << label;
  }
  fs::remove_all(dir);
}

// The replay takes each action's CPU time over the steps after the first; a run of one step has
// only the first, warm-up and all, which its line says.
TEST(RunCli, ACpuTimeReplayOfOneStepSaysItHoldsTheWarmUp) {
  const std::string run =
      "run --schedule 1f1b --pp 4 -m 4 --model mlp --layers 4 --hidden 32 --backend cpu "
      "--no-check --cores 2 --steps ";
  const std::string said = "(of the only step, the first: its warm-up included;";
  const Result one = meshscope(run + "1");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_NE(one.out.find("replayed from thread CPU time"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find(said), std::string::npos) << one.out;
  const fs::path replay = temp_dir("replay_steps") / "replay.json";
  const Result two = meshscope(run + "2 --replay-trace " + replay.string());
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("replayed from thread CPU time"), std::string::npos) << two.out;
  EXPECT_EQ(two.out.find(said), std::string::npos) << two.out;
  // The replay's trace names the workload that ran (it said "unknown").
  const nlohmann::json trace = nlohmann::json::parse(read_file(replay));
  EXPECT_EQ(trace.at("meshscope_run").at("workload").at("kind"), "mlp");
  EXPECT_EQ(trace.at("meshscope_run").at("workload").at("layers"), 4);
}

TEST(RunCli, CpuTimeReplayAppearsOnlyWhenRanksOutnumberTheCores) {
  const std::string run =
      "run --schedule 1f1b --pp 4 -m 4 --model mlp --layers 4 --hidden 32 --steps 2 "
      "--backend cpu --no-check ";
  const Result few = meshscope(run + "--cores 4");
  ASSERT_EQ(few.status, 0) << few.err;
  EXPECT_EQ(few.out.find("replayed from thread CPU time"), std::string::npos) << few.out;
  EXPECT_EQ(few.out.find("cpu-time replay"), std::string::npos) << few.out;
  const fs::path none = temp_dir("no-replay");
  const Result few_trace =
      meshscope(run + "--cores 4 --replay-trace " + (none / "r.json").string());
  ASSERT_EQ(few_trace.status, 0) << few_trace.err;
  EXPECT_NE(few_trace.out.find("replay trace: not written"), std::string::npos) << few_trace.out;
  EXPECT_FALSE(fs::exists(none / "r.json"));
  fs::remove_all(none);
  const Result few_json = meshscope(run + "--cores 4 --json");
  ASSERT_EQ(few_json.status, 0) << few_json.err;
  EXPECT_FALSE(nlohmann::json::parse(few_json.out).contains("cpu_time_replay"));

  // Pinned to one core, --cores 2 asks for more than the machine gives: said, since the figures
  // then take the rank threads for two cores' worth.
  const Result pinned = meshscope(run + "--cores 2", "taskset -c 0 ");
  ASSERT_EQ(pinned.status, 0) << pinned.err;
  EXPECT_NE(pinned.err.find("meshscope: warning: --cores 2 is more than the 1 core this process "
                            "may run on"),
            std::string::npos)
      << pinned.err;
  EXPECT_EQ(meshscope(run + "--cores 1", "taskset -c 0 ").err.find("--cores"), std::string::npos);

  const fs::path dir = temp_dir("replay");
  const Result many = meshscope(run + "--cores 3 --replay-trace " + (dir / "r.json").string());
  ASSERT_EQ(many.status, 0) << many.err;
  EXPECT_NE(many.out.find("replayed from thread CPU time (one device per rank; 4 ranks > 3 cores)"),
            std::string::npos)
      << many.out;
  EXPECT_NE(many.out.find("cpu-time replay: step"), std::string::npos) << many.out;  // the table
  const Result analyze = meshscope("analyze --json " + (dir / "r.json").string());
  ASSERT_EQ(analyze.status, 0) << analyze.err;
  EXPECT_EQ(nlohmann::json::parse(analyze.out)["devices"].size(), 4u);

  const Result many_json = meshscope(run + "--cores 3 --json");
  ASSERT_EQ(many_json.status, 0) << many_json.err;
  const auto j = nlohmann::json::parse(many_json.out);
  ASSERT_TRUE(j.contains("cpu_time_replay")) << many_json.out;
  const auto& rep = j["cpu_time_replay"];
  EXPECT_EQ(rep["cores"], 3);
  EXPECT_GT(rep["step_time_ns"].get<int64_t>(), 0);
  EXPECT_GT(rep["bubble_fraction"].get<double>(), 0.0);
  EXPECT_LT(rep["bubble_fraction"].get<double>(), 1.0);
  EXPECT_EQ(rep["device_bubble_fractions"].size(), 4u);
  fs::remove_all(dir);
}

}  // namespace
