// The device mesh dp x pp x tp: rank <-> coordinate, and the process groups derived from it.
// Expert parallelism is carved out of dp (Megatron-LM, DeepSpeed-MoE): with ep dividing dp, the dp
// coordinate d splits into the ep group d / ep (ep consecutive replicas that shard the experts and
// exchange tokens by all-to-all) and the ep rank d % ep; the ranks of one ep rank across the ep
// groups (the dp / ep replicas of the same experts) form the expert data parallel group, edp.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/collective.h"
#include "traces/mesh_coord.h"

namespace meshscope::mesh {

using traces::MeshCoord;

// The named process groups (world, dp, pp, tp, ep, edp) are the Timeline's: traces/collective.h.
using traces::GroupKind;
using traces::kGroupKindNames;
using traces::name;
using traces::parse_group_kind;

struct MeshShape {
  int dp = 1;
  int pp = 1;
  int tp = 1;
  // Expert parallel: divides dp and adds no ranks. Schedules and the simulator keep 1 here (their
  // actions name world, dp, pp and tp only); the executor sets the workload's ep on its backend's
  // mesh, whose transports then hold ep and edp groups.
  int ep = 1;
  int size() const { return dp * pp * tp; }
  friend bool operator==(const MeshShape&, const MeshShape&) = default;
};

// "dp=2 pp=4 tp=1", with " ep=2" when ep is not 1.
std::string to_string(const MeshShape& shape);

// Rank order puts tp innermost, then pp, then dp (as Megatron-LM does), so a tp group is a run of
// consecutive ranks that a node's fast links can hold.
class Mesh {
 public:
  // Throws std::invalid_argument when a dimension is < 1 or ep does not divide dp.
  explicit Mesh(MeshShape shape);

  const MeshShape& shape() const { return shape_; }
  int size() const { return shape_.size(); }
  int rank_of(const MeshCoord& c) const { return (c.dp * shape_.pp + c.pp) * shape_.tp + c.tp; }
  MeshCoord coord_of(int rank) const;
  int extent(GroupKind g) const;  // number of ranks in one group of kind g

  // The ranks of `rank`'s group of kind g, ordered by their coordinate along g (ep: the ep rank,
  // dp % ep; edp: the ep group, dp / ep).
  std::vector<int> group_ranks(GroupKind g, int rank) const;
  // Position of `rank` inside its group of kind g (its coordinate along g).
  int index_in_group(GroupKind g, int rank) const;
  // The rank at coordinate `index` along g in `rank`'s group.
  int peer_in_group(GroupKind g, int rank, int index) const;

  // "dp0 pp1 tp0"
  std::string describe(int rank) const;

 private:
  MeshShape shape_;
};

}  // namespace meshscope::mesh
