// Schedule generators: the classic pipeline families, composed with data and tensor parallelism
// on a dp x pp x tp mesh.
//
// What a generated Schedule means (the executor and the simulator implement exactly this):
// - Pipeline: stage s lives where the family's placement puts it (families.h): pp coordinate
//   s % pp (so with virtual_stages v a pp rank holds stages r, r + pp, ..., r + (v-1)pp), or the
//   V of zb-v and dualpipe-v. Each F/B/I/W runs one stage on one microbatch; an OVERLAP_F_B pair
//   (dualpipe-v) runs its two actions in order.
// - Tensor parallelism: the tp ranks of a pipeline stage run the same program. The tensor-parallel
//   collectives (Megatron: all-reduce after the row-parallel linear in F, after the column-parallel
//   linear's input gradient in B/I) are inside those compute actions, not separate actions. P2P
//   transfers go between equal tp coordinates: tp rank t of stage s sends to tp rank t of s + 1.
// - Data parallelism: each dp replica runs the whole pipeline on its own `microbatches`
//   microbatches (numbered 0..m-1 in every replica). After a stage's last gradient work (its last
//   B, or its last W) the rank all-reduces that stage's gradients over its dp group
//   ({s}ALLREDUCE(dp):{bytes}, only when dp > 1) and then runs {s}STEP.
// - Transfers: a SEND right after the compute that produces the data, a RECV right before the
//   compute that consumes it. Sends are eager (see validator.h), so this placement cannot
//   deadlock for the families below. Between stages on the same rank nothing is transferred.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/families.h"
#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

struct GeneratorConfig {
  Family family = Family::kOneFOneB;
  mesh::MeshShape mesh;
  int microbatches = 1;    // per data-parallel replica, per step
  int virtual_stages = 1;  // model chunks per pp rank (FamilyInfo says which counts a family takes)
  // Bytes stage s sends to stage s + 1 per microbatch, per tp rank (the gradient sent back has the
  // same size): one value per stage (the last stage's is unused), one per stage boundary
  // (num_stages - 1 values), a single value for every stage, or none (0 = not given).
  std::vector<int64_t> activation_bytes{};
  // Bytes of stage s's gradients held by one tp rank (the dp all-reduce payload): one value per
  // stage, a single value for every stage, or none (0 = not given).
  std::vector<int64_t> gradient_bytes{};
  // The stages' gradients are reduced with devices outside the mesh even when mesh.dp is 1: a
  // context-parallel run's cp devices, which hold the same parameters (docs/ACCURACY.md item 46).
  bool reduce_beyond_mesh = false;
  // > 0: lower only ranks [0, lowered_ranks) onto the mesh; the others' programs stay empty (for a
  // caller that needs a few ranks: predict's representatives, dp 0 of a tp 1 mesh).
  int lowered_ranks = 0;
};

// Throws std::invalid_argument saying what is wrong: a mesh dimension < 1, microbatches < 1, a
// family rule broken (family_rule_violation: chunks per rank, microbatch rule, pp = 1 families),
// byte lists of the wrong length or with negative values, or a schedule of more than
// kMaxGeneratedActions actions.
void check_config(const GeneratorConfig& config);

// About 50 bytes each in the engine: 2^25 actions (16,384 GPUs with 256 microbatches of 1F1B) fit a
// few GiB.
inline constexpr int64_t kMaxGeneratedActions = int64_t{1} << 25;
// The most actions `config` generates over its mesh (check_config holds it to the bound above):
// per rank v*m forwards, v*m backwards (or 2 v*m with I + W), up to 4 v*m transfers, 2 v ends.
int64_t max_generated_actions(const GeneratorConfig& config);

// The schedule for `config` (checked by check_config first).
Schedule generate(const GeneratorConfig& config);

// The compute actions (F, B, I, W) that pp coordinate r runs, for r in [0, pp): the order that
// generate() then lowers into transfers, collectives and steps. Same preconditions as generate().
std::vector<std::vector<Action>> pipeline_compute_orders(Family family, int pp, int virtual_stages,
                                                         int microbatches);

// The pipeline family whose compute order (pipeline_compute_orders at s's pp, chunks per rank
// and microbatches) is the one `s` runs on pipeline ranks 0..pp-1 of its first replica, rank by
// rank, compared by kind, stage and microbatch: which family a schedule recovered from a torch
// job's traces is. The first in Family order (naive, which runs GPipe's order at another pace, is
// not one); nullopt when none is.
std::optional<Family> family_running(const Schedule& s);

// True when `s` is what generate() makes of the family its name names (parse_family), at its
// mesh, microbatches and chunks per rank (with or without gradients reduced beyond the mesh):
// every rank's actions alike in all but their byte counts, which come from a workload. False for
// a name that is no family, and for a generated schedule edited by hand.
bool is_generated(const Schedule& s);

}  // namespace meshscope::schedule
