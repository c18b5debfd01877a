#include "sim/mesh/mesh.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

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

// Every kind's groups partition the ranks into groups of extent(g) members, listed in the order of
// the members' index_in_group, each member's group the same list.
void expect_partition(const Mesh& m, GroupKind g) {
  std::set<std::vector<int>> groups;
  for (int r = 0; r < m.size(); ++r) {
    const std::vector<int> ranks = m.group_ranks(g, r);
    ASSERT_EQ(static_cast<int>(ranks.size()), m.extent(g)) << name(g) << " of rank " << r;
    EXPECT_NE(std::find(ranks.begin(), ranks.end(), r), ranks.end()) << name(g) << " " << r;
    EXPECT_EQ(ranks[m.index_in_group(g, r)], r) << name(g) << " " << r;
    for (size_t i = 0; i < ranks.size(); ++i) {
      EXPECT_EQ(m.index_in_group(g, ranks[i]), static_cast<int>(i)) << name(g) << " " << r;
      EXPECT_EQ(m.group_ranks(g, ranks[i]), ranks) << name(g) << " " << r;
      EXPECT_EQ(m.peer_in_group(g, r, static_cast<int>(i)), ranks[i]) << name(g) << " " << r;
    }
    groups.insert(ranks);
  }
  EXPECT_EQ(static_cast<int>(groups.size()) * m.extent(g), m.size()) << name(g);
}

TEST(Mesh, EpGroupsAreBlocksOfDpAndEdpGroupsTheirStrides) {
  // dp 4 ep 2, pp 2: rank = dp * 2 + pp. Ep groups: dp {0, 1} and {2, 3}; edp: dp {0, 2}, {1, 3}.
  Mesh m({.dp = 4, .pp = 2, .tp = 1, .ep = 2});
  EXPECT_EQ(m.size(), 8);
  EXPECT_EQ(m.extent(GroupKind::kEp), 2);
  EXPECT_EQ(m.extent(GroupKind::kEdp), 2);
  EXPECT_EQ(m.group_ranks(GroupKind::kEp, 5), (std::vector<int>{5, 7}));   // dp 2, 3 at pp 1
  EXPECT_EQ(m.group_ranks(GroupKind::kEdp, 5), (std::vector<int>{1, 5}));  // dp 0, 2 at pp 1
  EXPECT_EQ(m.group_ranks(GroupKind::kEp, 6), (std::vector<int>{4, 6}));   // dp 2, 3 at pp 0
  EXPECT_EQ(m.group_ranks(GroupKind::kEdp, 6), (std::vector<int>{2, 6}));  // dp 1, 3 at pp 0
  EXPECT_EQ(m.index_in_group(GroupKind::kEp, 6), 1);
  EXPECT_EQ(m.index_in_group(GroupKind::kEdp, 6), 1);
  for (int g = 0; g < static_cast<int>(GroupKind::kCount); ++g)
    expect_partition(m, static_cast<GroupKind>(g));
  EXPECT_EQ(to_string(m.shape()), "dp=4 pp=2 tp=1 ep=2");
}

TEST(Mesh, EpOfOneIsSingletonsAndEpOfDpIsTheDpGroup) {
  for (const MeshShape shape : {MeshShape{.dp = 4, .pp = 1, .tp = 2, .ep = 1},
                                MeshShape{.dp = 4, .pp = 1, .tp = 2, .ep = 4},
                                MeshShape{.dp = 6, .pp = 2, .tp = 1, .ep = 3}}) {
    const Mesh m(shape);
    for (int g = 0; g < static_cast<int>(GroupKind::kCount); ++g)
      expect_partition(m, static_cast<GroupKind>(g));
    for (int r = 0; r < m.size(); ++r) {
      const std::vector<int> dp = m.group_ranks(GroupKind::kDp, r);
      if (shape.ep == 1) {
        EXPECT_EQ(m.group_ranks(GroupKind::kEp, r), std::vector<int>{r});
        EXPECT_EQ(m.group_ranks(GroupKind::kEdp, r), dp);
      } else if (shape.ep == shape.dp) {
        EXPECT_EQ(m.group_ranks(GroupKind::kEp, r), dp);
        EXPECT_EQ(m.group_ranks(GroupKind::kEdp, r), std::vector<int>{r});
      }
      // An ep group and an edp group of a rank meet in that rank only.
      const auto ep = m.group_ranks(GroupKind::kEp, r), edp = m.group_ranks(GroupKind::kEdp, r);
      for (int q : ep)
        EXPECT_EQ(std::count(edp.begin(), edp.end(), q), q == r ? 1 : 0) << to_string(shape);
    }
  }
  EXPECT_EQ(to_string(MeshShape{.dp = 4, .pp = 1, .tp = 2, .ep = 1}), "dp=4 pp=1 tp=2");
}

TEST(Mesh, RejectsBadShapesAndRanks) {
  EXPECT_THROW(Mesh({.dp = 0, .pp = 1, .tp = 1}), std::invalid_argument);
  try {
    Mesh({.dp = 2, .pp = 1, .tp = 1, .ep = 0});
    ADD_FAILURE() << "ep 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "mesh dimensions must be >= 1, got dp=2 pp=1 tp=1 ep=0");
  }
  try {
    Mesh({.dp = 6, .pp = 1, .tp = 1, .ep = 4});
    ADD_FAILURE() << "ep 4 of dp 6 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "mesh: ep=4 must divide dp=6");
  }
  Mesh m({.dp = 1, .pp = 2, .tp = 1});
  EXPECT_THROW(m.coord_of(2), std::out_of_range);
  EXPECT_THROW(m.peer_in_group(GroupKind::kPp, 0, 2), std::out_of_range);
}

TEST(Mesh, GroupKindNamesRoundTrip) {
  for (size_t i = 0; i < kGroupKindNames.size(); ++i) {
    auto g = static_cast<GroupKind>(i);
    EXPECT_EQ(parse_group_kind(name(g)), g);
  }
  EXPECT_EQ(parse_group_kind("ep"), GroupKind::kEp);
  EXPECT_EQ(parse_group_kind("edp"), GroupKind::kEdp);
  EXPECT_FALSE(parse_group_kind("etp").has_value());
}

}  // namespace
}  // namespace meshscope::mesh
