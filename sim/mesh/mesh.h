// The device mesh dp x pp x tp: rank <-> coordinate, and the process groups derived from it.
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

// The named process groups (world, dp, pp, tp) are the Timeline's: traces/collective.h.
using traces::GroupKind;
using traces::kGroupKindNames;
using traces::name;
using traces::parse_group_kind;

struct MeshShape {
  int dp = 1;
  int pp = 1;
  int tp = 1;
  int size() const { return dp * pp * tp; }
  friend bool operator==(const MeshShape&, const MeshShape&) = default;
};

// "dp=2 pp=4 tp=1"
std::string to_string(const MeshShape& shape);

// Rank order puts tp innermost, then pp, then dp (as Megatron-LM does), so a tp group is a run of
// consecutive ranks that a node's fast links can hold.
class Mesh {
 public:
  // Throws std::invalid_argument when a dimension is < 1.
  explicit Mesh(MeshShape shape);

  const MeshShape& shape() const { return shape_; }
  int size() const { return shape_.size(); }
  int rank_of(const MeshCoord& c) const { return (c.dp * shape_.pp + c.pp) * shape_.tp + c.tp; }
  MeshCoord coord_of(int rank) const;
  int extent(GroupKind g) const;  // number of ranks in one group of kind g

  // The ranks of `rank`'s group of kind g, ordered by their coordinate along g.
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
