// The agreement of a multi-process launch before its run (launch_agreement.h), with threads on
// loopback links standing in for mpirun's processes: what each process says and how each ends.
// tests/cli/mpi_run_test.cpp runs the same agreement under mpirun, through `meshscope run`.
#include "profiler/exec/launch_agreement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exec_test_util.h"
#include "loopback_link.h"

namespace meshscope::exec {
namespace {

using runtime::ProcessMessenger;
using runtime::testing::LoopbackHub;
using runtime::testing::LoopbackLink;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// How agree_before_run ended in one process.
struct Ending {
  bool refused = false;             // threw LaunchRefused
  std::string message;              // its message
  int exit_status = 0;              // its exit status
  std::optional<std::string> said;  // what this process was given to say, if anything
  bool checked = false;             // its checks ran
};

// Arguments as arguments_of_this_process() gives them: each followed by a NUL.
std::string arguments(std::initializer_list<std::string> each) {
  std::string out;
  for (const std::string& a : each) out += a + '\0';
  return out;
}

// One process's part: its arguments, whether its checks pass, its schedule's summary.
struct Process {
  std::string arguments = exec::arguments({"run", "--steps", "2"});
  std::function<void()> checks = [] {};
  std::string schedule_summary;       // compared where not empty in process 0
  std::chrono::milliseconds late{0};  // how long it takes to reach the agreement
};

// Runs the agreement in one thread per process, every process on its own messenger over a
// loopback link, as mpirun's processes would, and returns how each ended.
std::vector<Ending> agree(const std::vector<Process>& processes, double timeout_s = 10) {
  const int n = static_cast<int>(processes.size());
  auto hub = std::make_shared<LoopbackHub>(n);
  std::vector<std::future<Ending>> running;
  for (int i = 0; i < n; ++i) {
    running.push_back(std::async(std::launch::async, [&hub, &processes, timeout_s, i] {
      const Process& mine = processes[static_cast<size_t>(i)];
      std::this_thread::sleep_for(mine.late);
      ProcessMessenger messenger(std::make_unique<LoopbackLink>(hub, i));
      Ending ending;
      LaunchAgreement agreement;
      agreement.arguments = mine.arguments;
      agreement.checks = [&ending, &mine] {
        ending.checked = true;
        mine.checks();
      };
      agreement.timeout_s = timeout_s;
      if (!mine.schedule_summary.empty()) {
        agreement.schedule_file = "pipe.txt";
        agreement.schedule_summary = [&mine] { return mine.schedule_summary; };
      }
      try {
        agree_before_run(messenger, agreement,
                         [&ending](const std::string& error) { ending.said = error; });
      } catch (const LaunchRefused& e) {
        ending.refused = true;
        ending.message = e.what();
        ending.exit_status = e.exit_status;
      }
      return ending;
    }));
  }
  std::vector<Ending> out;
  for (auto& r : running) out.push_back(r.get());
  return out;
}

// Every process ended refused with `message` and `status`, and process 0 alone said it.
void expect_refused_everywhere_said_by_zero(const std::vector<Ending>& endings,
                                            const std::string& message, int status) {
  for (size_t p = 0; p < endings.size(); ++p) {
    SCOPED_TRACE("process " + std::to_string(p));
    EXPECT_TRUE(endings[p].refused);
    EXPECT_EQ(endings[p].message, message);
    EXPECT_EQ(endings[p].exit_status, status);
    if (p == 0) {
      EXPECT_EQ(endings[p].said, message);
    } else {
      EXPECT_FALSE(endings[p].said.has_value()) << *endings[p].said;
    }
  }
}

TEST(LaunchAgreement, ProcessesWithTheSameArgumentsAndScheduleAgreeAndRunTheirChecks) {
  std::vector<Process> processes(3);
  for (auto& p : processes) p.schedule_summary = "24 actions, hash 00000000000000ab";
  for (const Ending& e : agree(processes)) {
    EXPECT_FALSE(e.refused) << e.message;
    EXPECT_FALSE(e.said.has_value());
    EXPECT_TRUE(e.checked);
  }
}

TEST(LaunchAgreement, OtherArgumentsInOneProcessAreRefusedBeforeAnyCheck) {
  std::vector<Process> processes(3);
  processes[2].arguments = arguments({"run", "--steps", "3"});
  const auto endings = agree(processes);
  // The message `meshscope run` prints under mpirun: the arguments shown with spaces.
  expect_refused_everywhere_said_by_zero(
      endings,
      "process 2 was started with other arguments (run --steps 3) than process 0 (run --steps 2): "
      "every process of a run takes the same arguments",
      1);
  for (const Ending& e : endings) EXPECT_FALSE(e.checked);
}

TEST(LaunchAgreement, AnotherScheduleInOneProcessIsRefused) {
  // What each process read from the same --schedule-file path: another file on another node.
  std::vector<Process> processes(2);
  processes[0].schedule_summary =
      schedule_summary(testing::make_schedule(schedule::Family::kOneFOneB, {1, 2, 1}, 4));
  processes[1].schedule_summary =
      schedule_summary(testing::make_schedule(schedule::Family::kOneFOneB, {1, 2, 1}, 6));
  ASSERT_NE(processes[0].schedule_summary, processes[1].schedule_summary);
  EXPECT_THAT(processes[0].schedule_summary, HasSubstr(" actions, hash "));
  expect_refused_everywhere_said_by_zero(
      agree(processes),
      "process 1 read another schedule from 'pipe.txt' (" + processes[1].schedule_summary +
          ") than process 0 (" + processes[0].schedule_summary +
          "): every process of a run takes the same schedule; is the file another on another "
          "node?",
      1);
}

TEST(LaunchAgreement, TheSameScheduleHasTheSameSummary) {
  const schedule::Schedule s = testing::make_schedule(schedule::Family::kOneFOneB, {1, 4, 1}, 8);
  size_t actions = 0;
  for (const auto& rank : s.ranks) actions += rank.size();
  EXPECT_EQ(schedule_summary(s), schedule_summary(schedule::Schedule(s)));
  EXPECT_THAT(schedule_summary(s), StartsWith(std::to_string(actions) + " actions, hash "));
}

TEST(LaunchAgreement, OneProcessRefusingItsChecksStopsEveryProcessWithItsMessage) {
  std::vector<Process> processes(3);
  processes[1].checks = [] { throw std::runtime_error("cannot read pipe.txt"); };
  const auto endings = agree(processes);
  expect_refused_everywhere_said_by_zero(endings, "process 1: cannot read pipe.txt", 1);
  for (const Ending& e : endings) EXPECT_TRUE(e.checked);
}

TEST(LaunchAgreement, ProcessZerosOwnFailureIsSaidWithoutANumberAndBeforeTheOthers) {
  // Each process checks the same arguments, so each usually fails alike: said once, as process 0's.
  std::vector<Process> processes(3);
  for (auto& p : processes) p.checks = [] { throw std::runtime_error("--layers: too many"); };
  expect_refused_everywhere_said_by_zero(agree(processes), "--layers: too many", 1);
}

TEST(LaunchAgreement, ACommandLineRefusedInOneProcessEndsEveryProcessWithStatusTwo) {
  std::vector<Process> processes(2);
  processes[1].checks = [] {
    throw CommandLineRefused("--steps: Value 0 not in range [1 - 1048576]");
  };
  expect_refused_everywhere_said_by_zero(
      agree(processes), "process 1: --steps: Value 0 not in range [1 - 1048576]", 2);
}

TEST(LaunchAgreement, AFailureWithoutAMessageIsSaidAsFailed) {
  std::vector<Process> processes(2);
  processes[1].checks = [] { throw std::runtime_error(""); };
  expect_refused_everywhere_said_by_zero(agree(processes), "process 1: failed", 1);
}

TEST(LaunchAgreement, AProcessSilentPastTheTimeoutEndsTheLaunchInsteadOfHoldingIt) {
  // Process 2 comes only after the others gave up on its arguments (stopped in a debugger, say).
  std::vector<Process> processes(3);
  processes[2].late = std::chrono::milliseconds(750);
  const auto endings = agree(processes, 0.25);
  for (const Ending& e : endings) {
    EXPECT_TRUE(e.refused);
    EXPECT_EQ(e.exit_status, 1);
  }
  ASSERT_TRUE(endings[0].said.has_value());
  EXPECT_THAT(*endings[0].said,
              StartsWith("process 0: gave up waiting for the arguments it was started with from "
                         "process 2 within --timeout "));
  EXPECT_THAT(*endings[0].said, HasSubstr("before the run began"));
  EXPECT_FALSE(endings[1].said.has_value());
  EXPECT_FALSE(endings[2].said.has_value());
}

}  // namespace
}  // namespace meshscope::exec
