// diff(): equal schedules give nothing; each kind of difference is reported with rank and step.
#include "sim/schedule/schedule_diff.h"

#include <gtest/gtest.h>

#include "sim/schedule/schedule_text.h"

namespace meshscope::schedule {
namespace {

constexpr std::string_view kBase = R"(name hand
mesh pp=2
microbatches 2
rank 0: 0F0 0SEND_F0@1 0F1 0SEND_F1@1 0RECV_B0@1 0B0 0RECV_B1@1 0B1 0STEP
rank 1: 1RECV_F0@0 1F0 1B0 1SEND_B0@0 1RECV_F1@0 1F1 1B1 1SEND_B1@0 1STEP
)";

TEST(ScheduleDiff, EqualSchedulesHaveNoDifference) {
  EXPECT_EQ(diff(load(kBase), load(kBase)), "");
}

TEST(ScheduleDiff, NamesTheFirstDifferingStepPerRank) {
  Schedule b = load(kBase);
  std::swap(b.ranks[0][2], b.ranks[0][4]);  // rank 0: 0F1 <-> 0RECV_B0 at steps 2 and 4
  b.ranks[1].pop_back();                    // rank 1 loses its STEP
  const std::string d = diff(load(kBase), b, "mine", "theirs");
  EXPECT_NE(d.find("rank 0 step 2: 0F1 (mine) vs 0RECV_B0@1 (theirs); 9 vs 9 actions"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("rank 1 step 8: 1STEP (mine) vs ends (theirs); 9 vs 8 actions"),
            std::string::npos)
      << d;
  EXPECT_EQ(std::count(d.begin(), d.end(), '\n'), 2);
}

TEST(ScheduleDiff, ReportsHeaderFieldsAndExtraRanks) {
  Schedule b = load(kBase);
  b.name = "other";
  b.num_microbatches = 3;
  b.mesh.dp = 2;
  b.ranks.push_back({});
  const std::string d = diff(load(kBase), b);
  EXPECT_NE(d.find("name: hand (a) vs other (b)"), std::string::npos) << d;
  EXPECT_NE(d.find("mesh: dp=1 pp=2 tp=1 (a) vs dp=2 pp=2 tp=1 (b)"), std::string::npos) << d;
  EXPECT_NE(d.find("microbatches: 2 (a) vs 3 (b)"), std::string::npos) << d;
  EXPECT_NE(d.find("rank 2: only in b (0 actions)"), std::string::npos) << d;
}

}  // namespace
}  // namespace meshscope::schedule
