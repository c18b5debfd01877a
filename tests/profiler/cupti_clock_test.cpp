// Aligning CUPTI timestamps to the host clock from paired samples.
#include <gtest/gtest.h>

#include "profiler/capture/cupti/clock_sync.h"
#include "profiler/runtime/clock.h"
#include "tests/profiler/cupti_fake.h"

namespace meshscope::capture::cupti {
namespace {

constexpr int64_t kRealtimeLike = 1'795'000'000'000'000'000;  // CUPTI without a driver reads ~this

TEST(CuptiClock, NoPairsIsTheIdentity) {
  ClockSync c;
  EXPECT_EQ(c.to_host(12345), 12345);
}

TEST(CuptiClock, OnePairGivesAConstantOffset) {
  ClockSync c;
  c.add({kRealtimeLike + 1000, 5000});
  EXPECT_EQ(c.to_host(kRealtimeLike + 1000), 5000);
  EXPECT_EQ(c.to_host(kRealtimeLike + 3500), 7500);
  EXPECT_EQ(c.offset_ns(), 5000 - (kRealtimeLike + 1000));
}

TEST(CuptiClock, TwoPairsCorrectDriftExactlyOnHugeTimestamps) {
  // CUPTI runs 50 ppm fast: 10 s of host time read as 10.0005 s.
  ClockSync c;
  c.add({kRealtimeLike, 1'000'000'000});
  c.add({kRealtimeLike + 10'000'500'000, 11'000'000'000});
  EXPECT_NEAR(c.drift_ppm(), -49.9975, 1e-3);  // host per cupti ns, minus 1
  EXPECT_EQ(c.to_host(kRealtimeLike), 1'000'000'000);
  EXPECT_EQ(c.to_host(kRealtimeLike + 10'000'500'000), 11'000'000'000);
  // Half way through: 5.00025 s of CUPTI time is 5 s of host time.
  EXPECT_NEAR(c.to_host(kRealtimeLike + 5'000'250'000), 6'000'000'000, 1);
}

TEST(CuptiClock, PairsTakenTooCloseDoNotInventADrift) {
  ClockSync c;
  c.add({1000, 1000});
  c.add({1100, 1150});  // 100 ns apart: noise, not a slope
  EXPECT_DOUBLE_EQ(c.drift_ppm(), 0.0);
}

TEST(CuptiClock, SampleReadsBothClocksOfTheApi) {
  testing::FakeCupti api(/*offset_ns=*/kRealtimeLike, /*drift_ppm=*/0);
  ClockSync c;
  c.sample(api);
  ASSERT_EQ(c.size(), 1u);
  const int64_t host = runtime::host_now_ns();
  // A CUPTI time read now maps to within a few microseconds of the host clock now.
  EXPECT_NEAR(static_cast<double>(c.to_host(api.to_cupti(host))), static_cast<double>(host), 5e4);
}

}  // namespace
}  // namespace meshscope::capture::cupti
