// Recovering a torch job's schedule from its ranks' action orders (predict::recover_schedule):
// with several pipeline groups, the first group's schedule, and which rank of another group ran
// something else.
#include <gtest/gtest.h>

#include "sim/predict/recovered_schedule.h"

namespace meshscope::predict {
namespace {

using Orders = std::map<int, std::vector<std::string>>;

const std::vector<std::string> kRank0 = {"0F0", "0F1", "0B0", "0B1"};
const std::vector<std::string> kRank1 = {"1F0", "1B0", "1F1", "1B1"};

TEST(RecoverSchedule, TwoGroupsThatRanOneScheduleAgree) {
  const Orders orders = {{0, kRank0}, {1, kRank1}, {2, kRank0}, {3, kRank1}};
  const RecoveredSchedule r = recover_schedule(orders, {{0, 1}, {2, 3}}, "job");
  EXPECT_EQ(r.groups, 2);
  EXPECT_EQ(r.ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.differing_rank, -1);
  EXPECT_EQ(r.csv, "0F0,0F1,0B0,0B1\r\n1F0,1B0,1F1,1B1\r\n");
}

// The second group's last rank ran 1F1B where its place in the first ran GPipe's order; a group
// listed in other than rank order is compared place by place.
TEST(RecoverSchedule, NamesTheFirstRankOfAnotherGroupThatRanOtherActions) {
  const std::vector<std::string> gpipe1 = {"1F0", "1F1", "1B0", "1B1"};
  const Orders orders = {{0, kRank0}, {1, kRank1}, {2, kRank0}, {3, gpipe1}};
  EXPECT_EQ(recover_schedule(orders, {{0, 1}, {2, 3}}, "job").differing_rank, 3);
  const Orders swapped = {{0, kRank0}, {1, kRank1}, {2, kRank1}, {3, kRank0}};
  EXPECT_EQ(recover_schedule(swapped, {{0, 1}, {3, 2}}, "job").differing_rank, -1);
  EXPECT_EQ(recover_schedule(swapped, {{0, 1}, {2, 3}}, "job").differing_rank, 2);
}

// An action the reader refuses is named by its rank and place: the line and column of meshscope's
// own CSV of the orders pointed into no file ("job:1:85" of a folder).
TEST(RecoverSchedule, AnActionThatDoesNotReadIsNamedByItsRankAndPlace) {
  const Orders orders = {{0, kRank0}, {1, {"1F0", "1B0", "1F-1", "1B1"}}};
  try {
    recover_schedule(orders, {}, "job");
    FAIL() << "recovered";
  } catch (const RecoveryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "job: the schedule recovered from the trace: rank 1's action 3 ('1F-1'): negative "
              "microbatch in '1F-1'");
  }
}

}  // namespace
}  // namespace meshscope::predict
