#include "sim/cost/topology.h"

#include <gtest/gtest.h>

namespace meshscope::cost {
namespace {

TEST(CostTopology, TensorParallelInnermostKeepsTpGroupsInOneNode) {
  const Topology t({.dp = 4, .pp = 2, .tp = 8}, 1, 8);
  const GroupSpan tp = t.span(mesh::GroupKind::kTp, 5);
  EXPECT_EQ(tp.ranks, 8);
  EXPECT_EQ(tp.nodes, 1);
  const GroupSpan dp = t.span(mesh::GroupKind::kDp, 5);
  EXPECT_EQ(dp.ranks, 4);
  EXPECT_EQ(dp.nodes, 4);
  EXPECT_EQ(dp.ranks_per_node, 1);
  EXPECT_EQ(t.num_nodes(), 8);
  EXPECT_TRUE(t.same_node(0, 7));
  EXPECT_FALSE(t.same_node(7, 8));
}

TEST(CostTopology, PlacementOrderIsConfigurable) {
  std::string err;
  const auto order = parse_dim_order("dp,tp,pp", &err);
  ASSERT_TRUE(order) << err;
  EXPECT_EQ(to_string(*order), "dp,tp,cp,pp");
  const Topology t({.dp = 8, .pp = 2, .tp = 2}, 1, 8, *order);
  EXPECT_EQ(t.span(mesh::GroupKind::kDp, 0).nodes, 1);  // dp innermost now
  EXPECT_EQ(t.span(mesh::GroupKind::kTp, 0).nodes, 2);
  EXPECT_FALSE(parse_dim_order("tp,tp,dp", &err));
  EXPECT_FALSE(parse_dim_order("tp,xp", &err));
  EXPECT_NE(err.find("xp"), std::string::npos);
}

TEST(CostTopology, ContextAndExpertGroups) {
  const Topology t({.dp = 8, .pp = 1, .tp = 4}, 2, 8);  // tp 4 x cp 2 fill a node
  EXPECT_EQ(t.span_of_dim(MeshDim::kCp, 0).nodes, 1);
  EXPECT_EQ(t.span(mesh::GroupKind::kDp, 0).nodes, 8);
  const GroupSpan ep = t.span_of_dim(MeshDim::kDp, 3 * 4, 4);  // dp 3's block of 4
  EXPECT_EQ(ep.ranks, 4);
  EXPECT_EQ(ep.nodes, 4);
  EXPECT_EQ(t.num_devices(), 64);
}

TEST(CostTopology, TheDataParallelGroupTakesEachDpRanksCpDevices) {
  // megatron-core's dp_cp group, torchtitan's dp_shard_cp mesh (docs/ACCURACY.md item 46): the cp
  // devices of each dp rank reduce their gradients with it.
  const Topology t({.dp = 8, .pp = 1, .tp = 4}, 2, 8);  // tp 4 x cp 2 fill a node
  const GroupSpan dp = t.span(mesh::GroupKind::kDp, 3 * 4);
  EXPECT_EQ(dp.ranks, 16);
  EXPECT_EQ(dp.nodes, 8);
  EXPECT_EQ(dp.ranks_per_node, 2);
  // cp outermost (pp,dp,tp,cp order): the two cp halves of the mesh sit on other nodes.
  const auto order = parse_dim_order("tp,dp,pp,cp");
  ASSERT_TRUE(order);
  const Topology far({.dp = 2, .pp = 2, .tp = 4}, 2, 8, *order);  // a node: tp 4 x dp 2
  const GroupSpan split = far.span(mesh::GroupKind::kDp, 4);      // dp 1, pp 0
  EXPECT_EQ(split.ranks, 4);
  EXPECT_EQ(split.nodes, 2);
  EXPECT_EQ(split.ranks_per_node, 2);
  // Without cp the group is dp's alone, as before.
  const Topology plain({.dp = 8, .pp = 1, .tp = 4}, 1, 8);
  EXPECT_EQ(plain.span(mesh::GroupKind::kDp, 0).ranks, 8);
  EXPECT_EQ(plain.span(mesh::GroupKind::kDp, 0).ranks_per_node, 2);
}

TEST(CostTopology, EpGroupsAreDpBlocksAndEdpGroupsTheirStrides) {
  // tp 2 x pp 1 x dp 8 with ep 4 on nodes of 4 devices: a node holds 2 dp replicas.
  const Topology t({.dp = 8, .pp = 1, .tp = 2, .ep = 4}, 1, 4);
  const int rank = 5 * 2;  // dp 5: ep group dp 4..7, edp group dp 1, 5
  const GroupSpan ep = t.span(mesh::GroupKind::kEp, rank);
  EXPECT_EQ(ep.ranks, 4);
  EXPECT_EQ(ep.nodes, 2);
  EXPECT_EQ(ep.ranks_per_node, 2);
  const GroupSpan block = t.span_of_dim(MeshDim::kDp, rank, 4);
  EXPECT_EQ(block.nodes, ep.nodes);
  const GroupSpan edp = t.span(mesh::GroupKind::kEdp, rank);
  EXPECT_EQ(edp.ranks, 2);
  EXPECT_EQ(edp.nodes, 2);  // dp 1 on node 0, dp 5 on node 2
  EXPECT_EQ(edp.ranks_per_node, 1);
  // dp innermost on nodes of 16: the edp group's two members share a node.
  const auto order = parse_dim_order("dp,tp,pp");
  ASSERT_TRUE(order);
  const Topology inner({.dp = 8, .pp = 1, .tp = 2, .ep = 4}, 1, 16, *order);
  EXPECT_EQ(inner.span(mesh::GroupKind::kEdp, rank).nodes, 1);
  EXPECT_EQ(inner.span(mesh::GroupKind::kEdp, rank).ranks_per_node, 2);
  // ep = 1: ep groups are single ranks, edp the whole dp group.
  const Topology none({.dp = 8, .pp = 1, .tp = 2}, 1, 4);
  EXPECT_EQ(none.span(mesh::GroupKind::kEp, rank).ranks, 1);
  EXPECT_EQ(none.span(mesh::GroupKind::kEdp, rank).ranks, 8);
  EXPECT_EQ(none.span(mesh::GroupKind::kEdp, rank).nodes,
            none.span(mesh::GroupKind::kDp, rank).nodes);
}

}  // namespace
}  // namespace meshscope::cost
