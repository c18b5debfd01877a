// Lowering a pipeline's compute order onto a mesh: the transfers, gradient all-reduces and
// optimizer steps each compute action implies under the schedule's stage placement.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

// Per rank, in program order: a RECV before the compute that needs data from a stage on another
// rank, a SEND after the compute that produces data for one, and after a stage's last gradient
// work (its last B or W) ALLREDUCE(dp) of that stage (only when dp > 1, or the gradients are
// reduced beyond the mesh) and its STEP. An
// OVERLAP_F_B group (Action::overlap_next) stays together: the RECVs of all its members before
// it, their SENDs and steps after it, as torch's lowering places them.
class Lowering {
 public:
  // `s` gives mesh, num_stages and stage_owner; the byte lists are GeneratorConfig's
  // (generators.h).
  // `reduce_beyond_mesh`: the ALLREDUCE(dp) even when dp is 1 (GeneratorConfig's).
  Lowering(const Schedule& s, std::vector<int64_t> activation_bytes,
           std::vector<int64_t> gradient_bytes, bool reduce_beyond_mesh = false);

  // Lowers the compute order of `rank`. When `block_start` is given it receives, for each action
  // of `order`, the index in the result where the block lowered for it (its RECVs first) begins,
  // plus one last entry: the result's size.
  std::vector<Action> lower(int rank, const std::vector<Action>& order,
                            std::vector<int>* block_start = nullptr) const;

 private:
  void transfer(const mesh::MeshCoord& at, ActionKind kind, const Action& a,
                std::vector<Action>* out) const;
  void finish_stage(int stage, std::vector<Action>* out) const;

  const Schedule& s_;
  mesh::Mesh mesh_;
  std::vector<int64_t> activation_bytes_;
  std::vector<int64_t> gradient_bytes_;
  bool reduce_beyond_mesh_;
};

}  // namespace meshscope::schedule
