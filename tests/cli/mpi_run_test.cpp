// `mpirun -np N meshscope run ...`: one rank per process over MPI. The run equals the same run in
// one process (losses, trace: every rank's spans and every transfer's flow), a deadlock is
// reported once and ends every process, a wrong process count or another command is refused.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "cli_test_util.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;

using meshscope::cli_testing::read_file;
using meshscope::cli_testing::Result;
using meshscope::cli_testing::shell;

fs::path temp_dir() {
  static const fs::path dir = meshscope::cli_testing::temp_dir("mpi");
  return dir;
}

const std::string kMeshscope = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";

// The environment every mpirun of these tests starts with. Open MPI refuses root unless told; CI
// containers run as root. Oversubscribe: more processes than cores. A session directory of this
// test process's own: ctest runs two tests at once, and two Open MPI 4 launchers starting
// together race to create the shared /tmp/ompi.<host>.<uid>, the loser failing in orte_init
// ("A call to mkdir was unable to create the desired directory ... File exists"): 1 start in 60
// when two were started together here, none in 80 with a directory each (2026-12-06).
std::string mpi_env() {
  static const fs::path session = meshscope::cli_testing::temp_dir("mpi_session");
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_orte_tmpdir_base=" +
         session.string() + " ";
}

Result mpirun(int processes, const std::string& args) {
  return shell(mpi_env() + std::string(MESHSCOPE_MPIEXEC) + " -n " + std::to_string(processes) +
               " " + kMeshscope + " " + args);
}

// Two processes started with arguments of their own (mpirun's colon syntax).
Result mpirun_two(const std::string& first, const std::string& second) {
  return shell(mpi_env() + std::string(MESHSCOPE_MPIEXEC) + " -n 1 " + kMeshscope + " " + first +
               " : -n 1 " + kMeshscope + " " + second);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The "loss a -> b" of `run`'s first line.
std::string losses(const std::string& out) {
  const size_t at = out.find("loss ");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

// Per trace: pids with complete events, and the count of each phase letter.
struct TraceShape {
  std::set<int> pids;
  std::map<std::string, int> phases;
};
// Idle spans are left out: they are the gaps between a device's busy spans, so how many there are
// follows the timing (two spans that happen to abut leave no gap), not what ran.
TraceShape shape(const fs::path& file) {
  const nlohmann::json j = nlohmann::json::parse(read_file(file));
  TraceShape s;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    if (ph == "X" && e.value("cat", "") == "idle") continue;
    ++s.phases[ph];
    if (ph == "X") s.pids.insert(e.at("pid").get<int>());
  }
  return s;
}

// mpirun itself must be able to start processes here (a container may lack what Open MPI needs);
// if it cannot even start /bin/true, the cases skip with its message.
class MpiRun : public ::testing::Test {
 protected:
  void SetUp() override {
    static const Result probe =
        shell(mpi_env() + std::string(MESHSCOPE_MPIEXEC) + " -n 2 /bin/true");
    if (probe.status != 0) GTEST_SKIP() << "mpirun cannot start processes here: " << probe.err;
  }
};

TEST_F(MpiRun, EqualsTheRunInOneProcess) {
  const fs::path dir = temp_dir();
  const std::string common = " --layers 8 --hidden 32 --steps 2 ";
  // The moe run: all-to-alls over ep groups of 2, the replicated experts reduced over edp.
  for (const std::string mesh :
       {"--schedule 1f1b --pp 4", "--schedule zb-h1 --dp 2 --pp 2", "--schedule tp --tp 2 --dp 2",
        "--schedule dp --dp 4 --model moe --experts 4 --top-k 2 --ep 2"}) {
    const Result threads =
        shell(kMeshscope + " run " + mesh + common + "--out " + (dir / "threads.json").string());
    ASSERT_EQ(threads.status, 0) << mesh << "\n" << threads.err;
    const Result mpi = mpirun(4, "run " + mesh + common + "--out " + (dir / "mpi.json").string());
    ASSERT_EQ(mpi.status, 0) << mesh << "\n" << mpi.err;
    EXPECT_NE(mpi.out.find("a process per rank: MPI"), std::string::npos) << mpi.out;
    EXPECT_NE(mpi.out.find("equal ("), std::string::npos) << mpi.out;
    EXPECT_EQ(losses(mpi.out), losses(threads.out)) << mesh;
    EXPECT_EQ(count(mpi.out, "trace: "), 1u) << "only process 0 reports\n" << mpi.out;
    const TraceShape a = shape(dir / "mpi.json"), b = shape(dir / "threads.json");
    EXPECT_EQ(a.pids.size(), 4u) << mesh;
    EXPECT_EQ(a.phases, b.phases) << mesh << ": spans, flows and counters of every rank";
    // All four processes ran on this machine: its cores are the trace's (calibrate warns when
    // the ranks outnumbered them), and the table says when they did.
    const unsigned cores = std::thread::hardware_concurrency();
    const nlohmann::json trace = nlohmann::json::parse(read_file(dir / "mpi.json"));
    EXPECT_EQ(trace["meshscope"]["metadata"].value("cores", ""), std::to_string(cores)) << mesh;
    const std::string note = "the 4 processes on this node outnumber its " + std::to_string(cores) +
                             (cores == 1 ? " core" : " cores") +
                             ", so the wall-clock figures include waiting for a core";
    EXPECT_EQ(mpi.out.find(note) != std::string::npos, cores < 4) << mpi.out;
  }
}

TEST_F(MpiRun, ADeadlockIsReportedOnceAndEndsEveryProcess) {
  const fs::path file = temp_dir() / "deadlock.txt";
  std::ofstream(file) << "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
                         "rank 0: 0RECV_B0 0F0 0SEND_F0 0B0 0STEP\n"
                         "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1STEP\n";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r =
      mpirun(2, "run --schedule-file " + file.string() + " --no-validate --timeout 1 --layers 2");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(count(r.err,
                  "meshscope: error: deadlock: no progress for 1 s; rank 0 waits at action 0 "
                  "'0RECV_B0' (from rank 1); rank 1 waits at action 0 '1RECV_F0' (from rank 0)\n"),
            1u)
      << r.err;
  EXPECT_EQ(count(r.err, "meshscope: warning:"), 1u) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}

// A send no receive matches (--no-validate): the next step's receive would take the message left
// over, computing on another step's data (one left per step, 2 steps). As on threads, the run
// fails once every rank has ended its last step, naming what was left, and writes no trace.
TEST_F(MpiRun, ASendNoRankReceivesFailsTheRunAsOnThreads) {
  const fs::path dir = temp_dir();
  const fs::path file = dir / "extra_send.txt";
  std::ofstream(file) << "mesh dp=1 pp=2 tp=1\nstages 2\nmicrobatches 2\nstage_owner 0 1\n"
                         "rank 0: 0F0 0SEND_F0@1 0SEND_F0@1 0F1 0SEND_F1@1 0RECV_B0@1 0B0 "
                         "0RECV_B1@1 0B1 0STEP\n"
                         "rank 1: 1RECV_F0@0 1F0 1B0 1SEND_B0@0 1RECV_F1@0 1F1 1B1 1SEND_B1@0 "
                         "1STEP\n";
  const std::string args = "run --schedule-file " + file.string() +
                           " --no-validate --no-check --layers 4 --hidden 16 --batch 16 --out ";
  const Result threads =
      shell(kMeshscope + " " + args + (dir / "extra_send_threads.json").string());
  EXPECT_NE(threads.status, 0);
  const std::string left =
      "rank 1: 2 messages sent to it were never received (one from rank 0, 512 bytes)";
  EXPECT_NE(threads.err.find(left), std::string::npos) << threads.err;
  const Result mpi = mpirun(2, args + (dir / "extra_send_mpi.json").string());
  EXPECT_NE(mpi.status, 0) << mpi.out;
  EXPECT_EQ(count(mpi.err, left), 1u) << mpi.err;
  EXPECT_FALSE(fs::exists(dir / "extra_send_mpi.json"));
}

TEST_F(MpiRun, AnArgumentEveryProcessRefusesIsSaidOnce) {
  // Each process parses and checks the same arguments; process 0 alone prints what is wrong.
  for (const auto& [args, error] :
       {std::pair<std::string, std::string>{"run --schedule bogus --pp 2",
                                            "meshscope: error: unknown schedule 'bogus'"},
        {"run --steps 0 --pp 2", "meshscope: error: --steps: Value 0 not in range 1 to 1048576"},
        {"run --pp 2 --out /nonexistent/x.json", "--out: cannot write '/nonexistent/x.json'"},
        {"run --pp 2 --bogus", "The following argument was not expected: --bogus"},
        // Options of a threaded run, which would be ignored here.
        {"run --pp 2 --cores 1", "meshscope: error: --cores and --replay-trace are for ranks"},
        // Refused by the backend each process sets up, inside the run: said once too.
        {"run --pp 2 --backend cuda-virtual",
         "backend 'cuda-virtual' runs every rank on one GPU in one process"}}) {
    const Result r = mpirun(2, args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_EQ(count(r.err, error), 1u) << args << "\n" << r.err;
  }
  // Process 0 alone checks where the trace goes (another node's folders may differ): every
  // process ends with the parser's status, 2, whichever of them mpirun reports (it had been 1 or
  // 2 by chance).
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(mpirun(2, "run --pp 2 --layers 2 --out /nonexistent/x.json").status, 2);
  }
  // Options that do not go together are a usage error under mpirun too (it had been 1).
  EXPECT_EQ(mpirun(2, "run --pp 2 --layers 2 --cores 1").status, 2);
}

TEST_F(MpiRun, ProcessesStartedWithOtherArgumentsAreRefused) {
  // Another seed in one process would end as "differs from one device", another step count in a
  // wait in vain: said at the start instead, once.
  const Result r = mpirun_two("run --pp 2 --layers 2", "run --pp 2 --layers 2 --seed 7");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(count(r.err,
                  "meshscope: error: process 1 was started with other arguments (run --pp 2 "
                  "--layers 2 --seed 7) than process 0 (run --pp 2 --layers 2): every process "
                  "of a run takes the same arguments\n"),
            1u)
      << r.err;
  // Other arguments that process 1 cannot even parse: process 0 still says so.
  const Result bad = mpirun_two("run --pp 2 --layers 2", "run --pp 0 --layers 2");
  EXPECT_NE(bad.status, 0);
  EXPECT_EQ(count(bad.err,
                  "meshscope: error: process 1 was started with other arguments (run --pp 0 "
                  "--layers 2) than process 0 (run --pp 2 --layers 2)"),
            1u)
      << bad.err;
  // The same option spelled `--name=value` in one process and `--name value` in the other is the
  // same argument.
  const Result same =
      mpirun_two("run --pp 2 --layers 2 --steps 1", "run --pp=2 --layers=2 --steps 1");
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("equal ("), std::string::npos) << same.out;
}

// The same --schedule-file path may hold another file on another node (here: another working
// folder per process): a pp 2 schedule of 2 microbatches (18 actions, the optimizer steps
// included) and one of 4 (34). Refused at the start, once.
TEST_F(MpiRun, ProcessesThatReadOtherSchedulesAreRefused) {
  const fs::path a = temp_dir() / "node_a", b = temp_dir() / "node_b";
  fs::create_directories(a);
  fs::create_directories(b);
  ASSERT_EQ(
      shell(kMeshscope + " schedules --dump 1f1b --pp 2 -m 2 -o " + (a / "s.txt").string()).status,
      0);
  ASSERT_EQ(
      shell(kMeshscope + " schedules --dump 1f1b --pp 2 -m 4 -o " + (b / "s.txt").string()).status,
      0);
  const std::string args = " run --schedule-file s.txt --layers 4 --hidden 16 --batch 16 --out " +
                           (temp_dir() / "two_schedules.json").string();
  const Result r =
      shell(mpi_env() + std::string(MESHSCOPE_MPIEXEC) + " -n 1 -wdir " + a.string() + " " +
            kMeshscope + args + " : -n 1 -wdir " + b.string() + " " + kMeshscope + args);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(count(r.err,
                  "meshscope: error: process 1 read another schedule from 's.txt' (34 "
                  "actions, hash "),
            1u)
      << r.err;
  EXPECT_EQ(count(r.err, "meshscope: error"), 1u) << r.err;
  EXPECT_FALSE(fs::exists(temp_dir() / "two_schedules.json"));
}

// A process stuck before the run begins (here reading a --schedule-file that is a FIFO no one
// writes, which it waits a minute for) had held the others in the start-up exchanges for ever:
// the run's watchdog starts only with the run. They give up after --timeout and end the launch.
TEST_F(MpiRun, AProcessStuckBeforeTheRunEndsTheLaunchAfterTheTimeout) {
  const fs::path a = temp_dir() / "stuck_a", b = temp_dir() / "stuck_b";
  fs::create_directories(a);
  fs::create_directories(b);
  ASSERT_EQ(
      shell(kMeshscope + " schedules --dump 1f1b --pp 2 -m 2 -o " + (a / "s.txt").string()).status,
      0);
  ASSERT_EQ(shell("mkfifo " + (b / "s.txt").string()).status, 0);
  const std::string args =
      " run --schedule-file s.txt --layers 4 --hidden 16 --batch 16 --timeout 2";
  const auto started = std::chrono::steady_clock::now();
  const Result r = shell(mpi_env() + "timeout 50 " + std::string(MESHSCOPE_MPIEXEC) +
                         " -n 1 -wdir " + a.string() + " " + kMeshscope + args + " : -n 1 -wdir " +
                         b.string() + " " + kMeshscope + args);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.status, 124) << "still waiting after 50 s";
  EXPECT_LT(took, 45) << r.err;  // the FIFO's own wait is 60 s
  EXPECT_EQ(count(r.err,
                  "meshscope: error: process 0: gave up waiting for whether its arguments were "
                  "accepted from process 1 within --timeout 2 s before the run began"),
            1u)
      << r.err;
}

TEST_F(MpiRun, APeersLongComputeIsNoDeadlock) {
  // Each forward and backward takes longer than --timeout (1.2 to 2.2 s here against 0.6 s); the
  // rank waiting for it is in another process, whose watchdog hears the computing one's heartbeats
  // (ProcessMessenger). About one run in ten failed once (stop 58's CI; 10 of 24 at --timeout 0.2
  // beside two busy loops): a process that made its weights and batches late was silent until its
  // watchdog started, and the process already at the first barrier took it for a deadlock. The
  // watchdog now starts before that work (MultiProcessRun.AProcessThatPreparesLongerThanThe...).
  const Result r = mpirun(2,
                          "run --model mlp --hidden 768 --layers 2 --batch 2048 --pp 2 -m 1 "
                          "--steps 1 --timeout 0.6 --no-check --backend cpu");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("deadlock"), std::string::npos) << r.err;
}

TEST_F(MpiRun, ADeadlockNamesWhereTheInnocentRankWaitsNotThatItFailed) {
  // Rank 1 never sends microbatch 1's gradient: rank 0 waits for it, rank 1 finishes its step and
  // waits at the step barrier. Each process describes its ranks after they stopped; a rank
  // stopped by the abort is where it waited, as in one process, not "failed".
  const fs::path file = temp_dir() / "missing_send.txt";
  std::ofstream(file) << "mesh dp=1 pp=2 tp=1\nmicrobatches 2\n"
                         "rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1 0STEP\n"
                         "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1STEP\n";
  const std::string args =
      "run --schedule-file " + file.string() + " --no-validate --timeout 1 --layers 2 --steps 2";
  const Result threads = shell(kMeshscope + " " + args);
  const Result mpi = mpirun(2, args);
  const std::string want =
      "meshscope: error: deadlock: no progress for 1 s; rank 0 waits at action 6 '0RECV_B1' (from "
      "rank 1); rank 1 waits for the other ranks before step 1\n";
  EXPECT_NE(threads.err.find(want), std::string::npos) << threads.err;
  EXPECT_EQ(count(mpi.err, want), 1u) << mpi.err;
}

TEST_F(MpiRun, AStoppedRankEndsEveryProcessInBoundedTime) {
  // kill -STOP one rank's process mid-run: the others see no progress, report it, and the whole
  // job ends (MPI_Abort) instead of waiting in MPI_Finalize for a process that never comes.
  const fs::path out = temp_dir() / "stopped";
  const std::string script =
      mpi_env() + std::string(MESHSCOPE_MPIEXEC) + " -n 4 " + kMeshscope +
      // ~0.1 s a step here: minutes in all, so the run is under way when rank 1 stops.
      " run --schedule 1f1b --pp 4 --layers 16 --hidden 256 --steps 600 --timeout 2 "
      "--no-check >" +
      out.string() + ".out 2>" + out.string() +
      ".err &\n"
      "mp=$!; target=; all=\n"
      "for i in $(seq 1 200); do\n"
      "  for p in $(pgrep -P $mp); do\n"
      "    if tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1;"
      " then target=$p; fi\n"
      "  done\n"
      "  [ -n \"$target\" ] && break; sleep 0.1\n"
      "done\n"
      "all=$(pgrep -P $mp | tr '\\n' ' ')\n"
      "sleep 3; kill -STOP $target\n"
      "start=$(date +%s); ended=0\n"
      "for i in $(seq 1 900); do kill -0 $mp 2>/dev/null || { ended=1; break; }; sleep 0.1; done\n"
      "if [ $ended = 1 ]; then wait $mp; echo \"rc=$? after $(( $(date +%s) - start )) s\";"
      " else echo HUNG; fi\n"
      // Whatever is left (a hang): end it, by the ids of this job's own processes.
      "for p in $all; do kill -CONT $p 2>/dev/null; kill -KILL $p 2>/dev/null; done\n"
      "kill -KILL $mp 2>/dev/null; wait 2>/dev/null; echo \"target=$target\"\n";
  const Result r = shell(script);
  const std::string err = read_file(out.string() + ".err");
  ASSERT_NE(r.out.find("target="), std::string::npos) << r.out;
  ASSERT_EQ(r.out.find("target=\n"), std::string::npos) << "rank 1 was not found\n" << r.out;
  EXPECT_EQ(r.out.find("HUNG"), std::string::npos) << r.out << err;
  EXPECT_NE(r.out.find("rc="), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("rc=0 "), std::string::npos) << r.out << err;
  // The others noticed the stopped rank (not some other failure before the run), and say so
  // once, naming it: each of the three printed a line of its own before.
  EXPECT_EQ(count(err, "meshscope: error"), 1u) << err;
  EXPECT_EQ(count(err, "process 1 did not say how its part of the run ended"), 1u) << err;
}

TEST_F(MpiRun, AProcessCountThatIsNotTheMeshSizeIsRefusedOnce) {
  // The refused launch writes nothing: its --dump-schedule had been saved over first.
  const fs::path kept = temp_dir() / "kept.sched";
  std::ofstream(kept) << "# my schedule\n";
  const Result r =
      mpirun(2, "run --schedule 1f1b --pp 4 --layers 4 --dump-schedule " + kept.string());
  EXPECT_EQ(read_file(kept), "# my schedule\n");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(count(r.err,
                  "meshscope: error: the mesh dp=1 pp=4 tp=1 has 4 ranks but 2 processes "
                  "were launched; a multi-process run has one rank per process: launch 4 "
                  "(mpirun -np 4)\n"),
            1u)
      << r.err;
  // A plain run under a launcher's leftover variable names it.
  const Result left = shell(mpi_env() + "OMPI_COMM_WORLD_SIZE=4 " + kMeshscope +
                            " run --schedule 1f1b --pp 4 --layers 4");
  EXPECT_NE(left.status, 0);
  EXPECT_NE(left.err.find("but 1 process was launched; a multi-process run has one rank per "
                          "process: launch 4 (mpirun -np 4); or, not launched by mpirun, unset "
                          "OMPI_COMM_WORLD_SIZE=4"),
            std::string::npos)
      << left.err;
}

// One process is a valid launch: the mesh's ranks run as its threads, and the table says so (a
// user who meant a process per rank sees why there is no "a process per rank" line).
TEST_F(MpiRun, OneProcessRunsTheRanksAsThreadsAndSaysSo) {
  const Result r = mpirun(1, "run --schedule 1f1b --pp 4 --layers 4 --hidden 16 --steps 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("equal ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("a process per rank: MPI"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out,
                  "mpirun started one process: its 4 ranks ran as threads of it (mpirun "
                  "-np 4 runs a process per rank)\n"),
            1u)
      << r.out;
  // Without a launcher, nothing of the kind.
  const Result plain =
      shell(kMeshscope + " run --schedule 1f1b --pp 4 --layers 4 --hidden 16 --steps 1");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find("mpirun started one process"), std::string::npos) << plain.out;
}

TEST_F(MpiRun, OnlyRunRunsAcrossProcesses) {
  const Result r = mpirun(2, "demo --out " + (temp_dir() / "demo").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("only `meshscope run` runs across processes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(temp_dir() / "demo" / "summary.json"));
}

}  // namespace
