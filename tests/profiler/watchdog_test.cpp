// The watchdog: a run that stops making progress is aborted within its timeout, every rank thread
// is released, and the error names each rank and the action it waits on. A rank that fails makes
// the run fail with its error instead of hanging the others.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>

#include "profiler/capture/host_tracer.h"
#include "profiler/exec/executor.h"
#include "profiler/exec/watchdog.h"
#include "profiler/runtime/cpu_backend.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::exec {
namespace {

using Clock = std::chrono::steady_clock;

model::WorkloadSpec small_mlp() {
  model::WorkloadSpec s;
  s.layers = 2;
  s.hidden = 8;
  s.batch = 4;
  return s;
}

RunConfig config_for(const schedule::Schedule& s, double timeout_s) {
  RunConfig c;
  c.workload = small_mlp();
  c.schedule = s;
  c.backend = runtime::BackendKind::kCpu;
  c.timeout_s = timeout_s;
  return c;
}

TEST(Watchdog, FiresWhenNothingMovesAndCallsAbortOnce) {
  std::vector<RankProgress> progress(2);
  int aborts = 0;
  std::string reason;
  Watchdog w(
      progress, 0.05, [] { return std::string("rank 0 is stuck"); },
      [&](const std::string& r) {
        ++aborts;
        reason = r;
      });
  const auto t0 = Clock::now();
  while (!w.fired() && Clock::now() - t0 < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  w.stop();
  EXPECT_TRUE(w.fired());
  EXPECT_EQ(aborts, 1);
  EXPECT_EQ(reason, "deadlock: no progress for 0.05 s; rank 0 is stuck");
  EXPECT_EQ(w.message(), reason);
}

TEST(Watchdog, StaysQuietWhileSomeRankProgresses) {
  std::vector<RankProgress> progress(2);
  bool aborted = false;
  // A timeout far above any scheduling delay of a loaded CI host (a stall of the ticking thread
  // as long as the timeout would be a real lack of progress), progress for four timeouts.
  Watchdog w(
      progress, 0.25, [] { return std::string(); }, [&](const std::string&) { aborted = true; });
  const auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::seconds(1)) {
    progress[1].ticks.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  w.stop();
  EXPECT_FALSE(w.fired());
  EXPECT_FALSE(aborted);
}

// A forward of a large model on a CPU may take longer than the timeout: the rank is computing, not
// waiting. Waiting in a tp collective inside that compute is not computing.
TEST(Watchdog, ARankInsideItsComputeIsProgressButNotWhileItWaitsInAnInnerCollective) {
  std::vector<RankProgress> progress(2);
  progress[0].computing.store(true);
  Watchdog w(
      progress, 0.05, [] { return std::string("stuck"); }, [](const std::string&) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // ten timeouts
  EXPECT_FALSE(w.fired());
  progress[0].inner.store(0);  // now waiting for its tp peers
  const auto t0 = Clock::now();
  while (!w.fired() && Clock::now() - t0 < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  w.stop();
  EXPECT_TRUE(w.fired());
}

// Work the backend does for blocked ranks (a group's sum by its last member, a copy of a message)
// is progress though no action moves; once it is done, nothing moving is a deadlock again. A
// 16 MB all-reduce of 4 ranks had been reported as a deadlock at --timeout 0.1.
TEST(Watchdog, TheBackendsWorkForBlockedRanksIsProgress) {
  std::vector<RankProgress> progress(2);
  std::atomic<bool> working{true};
  Watchdog w(
      progress, 0.05, [] { return std::string("stuck"); }, [](const std::string&) {},
      {.share = {}, .working = [&] { return working.load(); }, .over = {}});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // ten timeouts
  EXPECT_FALSE(w.fired());
  working = false;
  const auto t0 = Clock::now();
  while (!w.fired() && Clock::now() - t0 < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  w.stop();
  EXPECT_TRUE(w.fired());
}

// Once every rank thread has returned nothing is left to deadlock: a slow join after the last
// tick had been reported as "deadlock: ...; rank 0 finished; rank 1 finished".
TEST(Watchdog, NeverFiresOnceEveryRankThreadHasReturned) {
  std::vector<RankProgress> progress(2);
  bool aborted = false;
  Watchdog w(
      progress, 0.02, [] { return std::string("finished"); },
      [&](const std::string&) { aborted = true; },
      {.share = {}, .working = {}, .over = [] { return true; }});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // fifteen timeouts
  w.stop();
  EXPECT_FALSE(w.fired());
  EXPECT_FALSE(aborted);
}

// A CpuGroup's sum and each member's copy of its result count as the backend's work (either
// alone keeps this test passing: it sees the backend working at some moment of the collective).
TEST(Watchdog, ACpuBackendSaysWhileItSumsOrCopiesForItsGroup) {
  runtime::CpuBackend backend({.dp = 2, .pp = 1, .tp = 1});
  EXPECT_FALSE(backend.working());
  std::atomic<bool> seen{false}, done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (backend.working()) seen = true;
    }
  });
  const size_t n = size_t{1} << 24;  // 64 MB a member: a sum long enough to be seen
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  std::thread other([&] { backend.transport(1).all_reduce(mesh::GroupKind::kDp, b.data(), n); });
  backend.transport(0).all_reduce(mesh::GroupKind::kDp, a.data(), n);
  other.join();
  done = true;
  watcher.join();
  EXPECT_TRUE(seen.load());
  EXPECT_FALSE(backend.working());
  EXPECT_EQ(a[n - 1], 3.0f);
}

TEST(Watchdog, PollsATwentiethOfTheTimeoutWithinOneAndOneHundredMilliseconds) {
  using std::chrono::milliseconds;
  EXPECT_EQ(watchdog_poll_interval(0.5), milliseconds(25));
  EXPECT_EQ(watchdog_poll_interval(1e-6), milliseconds(1));
  EXPECT_EQ(watchdog_poll_interval(60), milliseconds(100));
  // `--timeout 1e300` or `inf`: a rare poll, not an integer overflow into a 1 ms busy poll.
  EXPECT_EQ(watchdog_poll_interval(1e300), milliseconds(100));
  EXPECT_EQ(watchdog_poll_interval(std::numeric_limits<double>::infinity()), milliseconds(100));
}

TEST(Watchdog, DeadlockedScheduleIsAbortedAndNamesTheRanks) {
  // Both ranks receive first: rank 0 waits for a gradient rank 1 never sends, rank 1 for an
  // activation rank 0 never sends.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 0RECV_B0 0F0 0SEND_F0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1STEP\n");
  const auto t0 = Clock::now();
  try {
    run(config_for(s, 0.3));
    FAIL() << "the deadlocked run returned";
  } catch (const DeadlockError& e) {
    EXPECT_STREQ(e.what(),
                 "deadlock: no progress for 0.3 s; rank 0 waits at action 0 '0RECV_B0' (from "
                 "rank 1); rank 1 waits at action 0 '1RECV_F0' (from rank 0)");
  }
  // A guard against a hang, not a speed check: the watchdog polls 20 times per timeout.
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(20));
}

TEST(Watchdog, NamesTheGroupOfABlockedCollective) {
  // Rank 1 of a dp pair skips its gradient all-reduce: rank 0 waits in it alone.
  const auto s = schedule::load(
      "mesh dp=2 pp=1 tp=1\nmicrobatches 1\n"
      "rank 0: 0F0 0B0 0ALLREDUCE(dp) 0STEP\n"
      "rank 1: 0F0 0B0 0STEP\n");
  try {
    run(config_for(s, 0.2));
    FAIL() << "the deadlocked run returned";
  } catch (const DeadlockError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 0 waits at action 2 '0ALLREDUCE(dp)' (dp group: ranks 0,1)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("rank 1 waits for the other ranks to finish the last step"),
              std::string::npos)
        << msg;
  }
}

// A device whose GEMM fails on demand, to check that one rank's failure ends the run.
class FailingOps : public runtime::CpuDeviceOps {
 public:
  void gemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*,
            int) override {
    throw std::runtime_error("injected GEMM failure");
  }
};

class OneFailingRank final : public runtime::Backend {
 public:
  OneFailingRank(mesh::MeshShape shape, int failing) : inner_(shape), failing_(failing) {}
  runtime::BackendKind kind() const override { return runtime::BackendKind::kCpu; }
  std::string description() const override { return "cpu with a failing rank"; }
  const mesh::Mesh& mesh() const override { return inner_.mesh(); }
  void attach_thread(int rank) override { inner_.attach_thread(rank); }
  runtime::DeviceOps& device(int rank) override {
    return rank == failing_ ? failing_ops_ : inner_.device(rank);
  }
  runtime::Transport& transport(int rank) override { return inner_.transport(rank); }
  void synchronize(int rank) override { inner_.synchronize(rank); }
  void abort(const std::string& reason) noexcept override { inner_.abort(reason); }
  bool aborted() const noexcept override { return inner_.aborted(); }

 private:
  runtime::CpuBackend inner_;
  FailingOps failing_ops_;
  int failing_;
};

TEST(Watchdog, AFailingRankFailsTheRunWithoutWaitingForTheTimeout) {
  schedule::GeneratorConfig g;
  g.family = schedule::Family::kOneFOneB;
  g.mesh = {1, 2, 1};
  g.microbatches = 2;
  const auto s = schedule::generate(g);
  OneFailingRank backend({1, 2, 1}, 1);
  capture::HostClockTracer tracer;
  const auto t0 = Clock::now();
  try {
    run(config_for(s, 60), backend, tracer);
    FAIL() << "the run with a failing rank returned";
  } catch (const DeadlockError&) {
    FAIL() << "a failure must not be reported as a deadlock";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 1 at action"), std::string::npos) << msg;
    EXPECT_NE(msg.find("injected GEMM failure"), std::string::npos) << msg;
  }
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));  // not the 60 s timeout
  EXPECT_TRUE(backend.aborted());
}

// Caps the process's address space at what it maps now plus `extra_bytes` (unused in sanitizer
// builds, which skip the test that calls it).
[[maybe_unused]] void limit_address_space(size_t extra_bytes) {
  std::ifstream status("/proc/self/status");
  std::string line;
  size_t vm_kib = 0;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoul(line.substr(7));
  }
  const rlim_t cap = vm_kib * 1024 + extra_bytes;
  const rlimit limit{cap, cap};
  if (vm_kib == 0 || setrlimit(RLIMIT_AS, &limit) != 0) {
    std::fprintf(stderr, "cannot limit the address space\n");
    std::exit(3);
  }
}

TEST(WatchdogDeathTest, RanksThatCannotStartFailTheRunInsteadOfTerminating) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve far more address space than this test leaves";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  schedule::GeneratorConfig g;
  g.family = schedule::Family::kDataParallel;
  g.mesh = {64, 1, 1};
  g.microbatches = 1;
  RunConfig c = config_for(schedule::generate(g), 30);
  c.workload.batch = 64;
  // 64 rank threads need 64 stacks of 2-8 MiB each: only a few fit in 32 MiB more. Before the
  // fix the started threads were destroyed joinable and the process terminated.
  EXPECT_EXIT(
      {
        limit_address_space(size_t{32} << 20);
        try {
          run(c);
          std::fprintf(stderr, "the run started all 64 threads\n");
          std::exit(2);
        } catch (const std::runtime_error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(0);
        }
      },
      ::testing::ExitedWithCode(0), "could not start the thread of rank [0-9]+ of 64");
#endif
}

TEST(Watchdog, StepCountsBeyondWhatARunCanHoldAreRejectedBeforeAllocating) {
  // Before, every step's data was generated up front: a billion steps ran out of memory after
  // minutes instead of failing at once.
  schedule::GeneratorConfig g;
  g.family = schedule::Family::kOneFOneB;
  g.mesh = {1, 2, 1};
  g.microbatches = 2;
  RunConfig c = config_for(schedule::generate(g), 5);
  c.steps = 1'000'000'000;
  const auto t0 = Clock::now();
  try {
    run(c);
    FAIL() << "a billion steps ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run fewer steps"), std::string::npos) << e.what();
  }
  c.steps = 10'000;
  c.workload.batch = 1 << 20;  // 10k steps of a million samples: hundreds of GiB of data
  try {
    run(c);
    FAIL() << "hundreds of GiB of data were generated";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("run fewer steps or a smaller batch"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
}

TEST(Watchdog, ScheduleTheWorkloadCannotRunIsRejectedBeforeStarting) {
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 1F0\n"
      "rank 1: 1F0\n");
  try {
    run(config_for(s, 5));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 action 0 '1F0': stage 1 lives on pp rank 1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace meshscope::exec
