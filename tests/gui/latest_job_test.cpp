#include "gui/view/latest_job.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

namespace meshscope::gui {
namespace {

template <typename Job>
auto wait_for_outcome(Job& job) {
  for (int i = 0; i < 5000; ++i) {
    if (auto o = job.poll()) return o;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return decltype(job.poll()){};
}

TEST(LatestJob, ComputesOffTheCallingThreadAndHandsTheResultBackOnce) {
  const auto caller = std::this_thread::get_id();
  LatestJob<int, std::thread::id> job([](const int&) { return std::this_thread::get_id(); });
  const uint64_t id = job.submit(1);
  auto outcome = wait_for_outcome(job);
  ASSERT_TRUE(outcome && outcome->value);
  EXPECT_EQ(outcome->id, id);
  EXPECT_NE(*outcome->value, caller);
  EXPECT_FALSE(job.poll());
}

TEST(LatestJob, ANewRequestReplacesOneThatHasNotStarted) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> runs{0};
  LatestJob<int, int> job([&](const int& x) {
    ++runs;
    if (x == 1) gate.wait();  // hold the worker on the first request
    return x * 10;
  });
  job.submit(1);
  while (runs.load() == 0) std::this_thread::yield();
  job.submit(2);
  const uint64_t last = job.submit(3);  // replaces 2 before it starts
  EXPECT_TRUE(job.busy());
  release.set_value();
  std::optional<LatestJob<int, int>::Outcome> outcome;
  while (!outcome || outcome->id != last) {
    auto o = wait_for_outcome(job);
    ASSERT_TRUE(o);
    outcome = o;
  }
  EXPECT_EQ(outcome->value, 30);
  EXPECT_EQ(runs.load(), 2);  // 1 and 3; 2 never ran
}

TEST(LatestJob, AThrowingRequestReportsItsMessage) {
  LatestJob<int, int> job(
      [](const int&) -> int { throw std::runtime_error("deadlock at rank 2"); });
  job.submit(0);
  auto outcome = wait_for_outcome(job);
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->value);
  EXPECT_EQ(outcome->error, "deadlock at rank 2");
  EXPECT_FALSE(job.busy());
}

}  // namespace
}  // namespace meshscope::gui
