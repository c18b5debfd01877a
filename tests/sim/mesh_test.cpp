#include "sim/mesh/mesh.h"

#include <gtest/gtest.h>

namespace meshscope::mesh {
namespace {

TEST(Mesh, RankOrderPutsTpInnermostThenPpThenDp) {
  Mesh m({.dp = 2, .pp = 4, .tp = 2});
  EXPECT_EQ(m.size(), 16);
  EXPECT_EQ(m.rank_of({.dp = 0, .pp = 0, .tp = 1}), 1);
  EXPECT_EQ(m.rank_of({.dp = 0, .pp = 1, .tp = 0}), 2);
  EXPECT_EQ(m.rank_of({.dp = 1, .pp = 0, .tp = 0}), 8);
  for (int r = 0; r < m.size(); ++r) EXPECT_EQ(m.rank_of(m.coord_of(r)), r);
}

TEST(Mesh, GroupsHoldRanksDifferingInOneCoordinate) {
  Mesh m({.dp = 2, .pp = 4, .tp = 2});
  EXPECT_EQ(m.group_ranks(GroupKind::kTp, 5), (std::vector<int>{4, 5}));
  EXPECT_EQ(m.group_ranks(GroupKind::kPp, 5), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(m.group_ranks(GroupKind::kDp, 5), (std::vector<int>{5, 13}));
  EXPECT_EQ(m.group_ranks(GroupKind::kWorld, 5).size(), 16u);
  EXPECT_EQ(m.index_in_group(GroupKind::kPp, 5), 2);
  EXPECT_EQ(m.peer_in_group(GroupKind::kPp, 5, 3), 7);
  EXPECT_EQ(m.describe(13), "dp1 pp2 tp1");
}

TEST(Mesh, RejectsBadShapesAndRanks) {
  EXPECT_THROW(Mesh({.dp = 0, .pp = 1, .tp = 1}), std::invalid_argument);
  Mesh m({.dp = 1, .pp = 2, .tp = 1});
  EXPECT_THROW(m.coord_of(2), std::out_of_range);
  EXPECT_THROW(m.peer_in_group(GroupKind::kPp, 0, 2), std::out_of_range);
}

TEST(Mesh, GroupKindNamesRoundTrip) {
  for (size_t i = 0; i < kGroupKindNames.size(); ++i) {
    auto g = static_cast<GroupKind>(i);
    EXPECT_EQ(parse_group_kind(name(g)), g);
  }
  EXPECT_FALSE(parse_group_kind("ep").has_value());
}

}  // namespace
}  // namespace meshscope::mesh
