// Stage placement arithmetic shared by generators, validator, executors and simulator.
#include "sim/schedule/placement.h"

namespace meshscope::schedule {

std::optional<int> stage_rank(const Schedule& s, const mesh::Mesh& m, int stage, int rank) {
  return stage_rank(s, m, stage, m.coord_of(rank));
}

std::optional<int> stage_rank(const Schedule& s, const mesh::Mesh& m, int stage,
                              mesh::MeshCoord coord) {
  if (stage < 0 || stage >= static_cast<int>(s.stage_owner.size())) return std::nullopt;
  coord.pp = s.stage_owner[stage];
  return m.rank_of(coord);
}

std::optional<int> derived_peer(const Schedule& s, const mesh::Mesh& m, int rank, const Action& a) {
  if (!is_p2p(a.kind)) return std::nullopt;
  return stage_rank(s, m, p2p_peer_stage(a), rank);
}

bool same_owner(const Schedule& s, int stage_a, int stage_b) {
  return s.stage_owner.at(stage_a) == s.stage_owner.at(stage_b);
}

}  // namespace meshscope::schedule
