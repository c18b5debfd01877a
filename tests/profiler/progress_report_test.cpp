// Progress lines of long runs: how far the local ranks got, printed every interval; nothing for a
// run shorter than one interval.
#include "profiler/exec/progress_report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

namespace meshscope::exec {
namespace {

TEST(ProgressReport, TheLineSaysHowFarTheLocalRanksGot) {
  std::vector<RankProgress> progress(3);
  progress[0].ticks = 30;
  progress[0].step = 1;
  progress[0].state = RankState::kRunning;
  progress[2].ticks = 10;
  progress[2].step = 0;
  progress[2].state = RankState::kRunning;
  progress[1].ticks = 999;  // another process's rank: not counted
  ProgressReport r(progress, 2, nullptr);
  r.data_made(1);
  EXPECT_EQ(r.line(std::chrono::seconds(12)), "run: making the data of step 2 of 2, 12 s");
  r.start_ranks({0, 2}, 160);
  EXPECT_EQ(r.line(std::chrono::seconds(20)), "run: 25% (40 of 160 actions), step 1 of 2, 20 s");
  // One rank of several (a process of an mpirun): the line says it is that rank's.
  r.start_ranks({2}, 80);
  EXPECT_EQ(r.line(std::chrono::seconds(30)),
            "run rank 2 of 3: 12% (10 of 80 actions), step 1 of 2, 30 s");
}

TEST(ProgressReport, PrintsEveryIntervalAndNothingForAShortRun) {
  std::vector<RankProgress> progress(1);
  std::ostringstream log;
  {
    ProgressReport quick(progress, 1, &log, std::chrono::seconds(10));
    quick.start_ranks({0}, 10);
  }
  EXPECT_EQ(log.str(), "") << "a run shorter than the interval prints nothing";
  {
    ProgressReport slow(progress, 1, &log, std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    slow.start_ranks({0}, 10);
    progress[0].ticks = 5;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  EXPECT_NE(log.str().find("run: making the data of step 1 of 1,"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("run: 50% (5 of 10 actions), step 1 of 1,"), std::string::npos)
      << log.str();
}

}  // namespace
}  // namespace meshscope::exec
