// Where a schedule's stages live on the mesh, and who is on the other side of a transfer.
// Executors, the simulator, the generators and the validator all derive peers the same way here.
#pragma once

#include <optional>

#include "sim/mesh/mesh.h"
#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

// The stage on the other side of a p2p action: SEND_F / RECV_B talk to stage + 1, RECV_F / SEND_B
// to stage - 1. Not meaningful for other kinds.
constexpr int p2p_peer_stage(const Action& a) {
  return a.kind == ActionKind::kSendForward || a.kind == ActionKind::kRecvBackward ? a.stage + 1
                                                                                   : a.stage - 1;
}

// The global rank holding `stage` in the same data-parallel replica and tensor-parallel position
// as `rank`; nullopt when the stage is out of range.
std::optional<int> stage_rank(const Schedule& s, const mesh::Mesh& m, int stage, int rank);
// The same for the rank at `coord` (for a caller that derives many peers of one rank).
std::optional<int> stage_rank(const Schedule& s, const mesh::Mesh& m, int stage,
                              mesh::MeshCoord coord);

// The rank a p2p action of `rank` talks to, derived from the stage placement (the action's own
// `peer` field, when given, must equal it; the validator checks). nullopt when the neighbour stage
// does not exist (stage 0 has no previous stage, the last stage no next one).
std::optional<int> derived_peer(const Schedule& s, const mesh::Mesh& m, int rank, const Action& a);

// True when the two stages live on the same rank (interleaved schedules with pp = 1, hand-written
// placements), so data passes between them without a transfer.
bool same_owner(const Schedule& s, int stage_a, int stage_b);

}  // namespace meshscope::schedule
