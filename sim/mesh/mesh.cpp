// Rank arithmetic of the dp x pp x tp mesh.
#include "sim/mesh/mesh.h"

#include <stdexcept>

namespace meshscope::mesh {

std::string to_string(const MeshShape& s) {
  return "dp=" + std::to_string(s.dp) + " pp=" + std::to_string(s.pp) +
         " tp=" + std::to_string(s.tp) + (s.ep != 1 ? " ep=" + std::to_string(s.ep) : "");
}

Mesh::Mesh(MeshShape shape) : shape_(shape) {
  if (shape.dp < 1 || shape.pp < 1 || shape.tp < 1 || shape.ep < 1) {
    throw std::invalid_argument("mesh dimensions must be >= 1, got " + to_string(shape));
  }
  if (shape.dp % shape.ep != 0) {
    throw std::invalid_argument("mesh: ep=" + std::to_string(shape.ep) +
                                " must divide dp=" + std::to_string(shape.dp));
  }
}

MeshCoord Mesh::coord_of(int rank) const {
  if (rank < 0 || rank >= size()) {
    throw std::out_of_range("rank " + std::to_string(rank) + " outside mesh of " +
                            std::to_string(size()));
  }
  MeshCoord c;
  c.tp = rank % shape_.tp;
  c.pp = (rank / shape_.tp) % shape_.pp;
  c.dp = rank / (shape_.tp * shape_.pp);
  return c;
}

int Mesh::extent(GroupKind g) const {
  switch (g) {
    case GroupKind::kWorld:
      return size();
    case GroupKind::kDp:
      return shape_.dp;
    case GroupKind::kPp:
      return shape_.pp;
    case GroupKind::kTp:
      return shape_.tp;
    case GroupKind::kEp:
      return shape_.ep;
    case GroupKind::kEdp:
      return shape_.dp / shape_.ep;
    case GroupKind::kCount:
      break;
  }
  throw std::invalid_argument("bad group kind");
}

int Mesh::index_in_group(GroupKind g, int rank) const {
  const MeshCoord c = coord_of(rank);
  switch (g) {
    case GroupKind::kWorld:
      return rank;
    case GroupKind::kDp:
      return c.dp;
    case GroupKind::kPp:
      return c.pp;
    case GroupKind::kTp:
      return c.tp;
    case GroupKind::kEp:
      return c.dp % shape_.ep;
    case GroupKind::kEdp:
      return c.dp / shape_.ep;
    case GroupKind::kCount:
      break;
  }
  throw std::invalid_argument("bad group kind");
}

int Mesh::peer_in_group(GroupKind g, int rank, int index) const {
  if (index < 0 || index >= extent(g)) {
    throw std::out_of_range("index " + std::to_string(index) + " outside " + std::string(name(g)) +
                            " group of " + std::to_string(extent(g)));
  }
  MeshCoord c = coord_of(rank);
  switch (g) {
    case GroupKind::kWorld:
      return index;
    case GroupKind::kDp:
      c.dp = index;
      break;
    case GroupKind::kPp:
      c.pp = index;
      break;
    case GroupKind::kTp:
      c.tp = index;
      break;
    case GroupKind::kEp:
      c.dp = c.dp / shape_.ep * shape_.ep + index;
      break;
    case GroupKind::kEdp:
      c.dp = index * shape_.ep + c.dp % shape_.ep;
      break;
    case GroupKind::kCount:
      throw std::invalid_argument("bad group kind");
  }
  return rank_of(c);
}

std::vector<int> Mesh::group_ranks(GroupKind g, int rank) const {
  std::vector<int> ranks;
  ranks.reserve(extent(g));
  for (int i = 0; i < extent(g); ++i) ranks.push_back(peer_in_group(g, rank, i));
  return ranks;
}

std::string Mesh::describe(int rank) const {
  const MeshCoord c = coord_of(rank);
  return "dp" + std::to_string(c.dp) + " pp" + std::to_string(c.pp) + " tp" + std::to_string(c.tp);
}

}  // namespace meshscope::mesh
