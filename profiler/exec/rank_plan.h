// A rank's program compiled once before the run: every action resolved to its stage, peer, tag and
// byte count, with the ActionInfo the tracer gets, so the hot loop only switches on the kind.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "profiler/exec/stage_layout.h"
#include "sim/mesh/mesh.h"
#include "sim/model/partition.h"
#include "sim/model/stage_cost.h"
#include "sim/model/workload.h"
#include "sim/schedule/schedule.h"

namespace meshscope::exec {

struct PlannedAction {
  schedule::ActionKind kind = schedule::ActionKind::kForward;
  int local_stage = 0;  // index into RankPlan::stages
  int microbatch = -1;
  int peer = -1;
  int64_t tag = -1;
  size_t bytes = 0;
  size_t block_floats = 0;  // ALLTOALL: floats sent to (and received from) each group member
  mesh::GroupKind group = mesh::GroupKind::kWorld;
  int64_t activation_delta = 0;  // activation bytes this action makes the rank hold (+) or free (-)
};

struct RankPlan {
  int rank = 0;
  mesh::MeshCoord coord;
  std::vector<StageLayout> stages;  // the stages this rank holds, by increasing stage number
  std::vector<int> local_of;        // global stage -> index into stages, -1 if elsewhere
  std::vector<PlannedAction> actions;
  std::vector<capture::ActionInfo> infos;  // parallel to actions
  std::vector<capture::InnerInfo> inner;   // tp collectives of the rank's stages
  // Per peer this rank sends to (itself excluded): the tags of those messages in the order the
  // peer receives them, for Transport::expect_recv_order.
  std::map<int, std::vector<int64_t>> peer_recv_orders;
};

// The message tag of a p2p transfer, named after the receiving stage: activations to stage s and
// gradients to stage s for microbatch mb. Unique per (sender, receiver) within a step.
int64_t p2p_tag(schedule::ActionKind kind, int stage, int microbatch, int microbatches);

// Expert parallelism as Megatron-LM and DeepSpeed-MoE run it: ep divides dp, each ep group (ep
// consecutive dp replicas, sim/mesh/mesh.h) shards the experts among its members and exchanges
// tokens by all-to-all, and each expert is replicated over the dp / ep replicas of its edp group,
// which all-reduce its gradients. ep = 1: every replica holds every expert, reduced over dp with
// the dense parameters. Throws std::invalid_argument naming both values when ep does not divide
// dp, or for an ep other than 1 on a workload without experts.
void check_expert_parallel(const model::WorkloadSpec& w, int dp);
// The mesh of a run's backend: the schedule's with the workload's ep carved out of dp (after
// check_expert_parallel), so the transports hold its ep and edp groups.
mesh::MeshShape run_mesh(const mesh::MeshShape& schedule_mesh, const model::WorkloadSpec& w);

// Compiles every rank's program. Throws std::invalid_argument naming the rank, the action index
// and its token for a schedule the executor cannot run with this workload: a stage not held by
// the rank, a microbatch out of range, a transfer past the first or last stage, a peer that
// differs from the stage placement, a byte count that differs from the workload's, a collective
// other than ALLREDUCE(dp) or ALLTOALL, an ALLTOALL whose bytes do not split into one equal
// block of floats per group member. Throws std::invalid_argument when the mesh's ep is not the
// workload's (run_mesh).
std::vector<RankPlan> make_plans(const model::Workload& w, const schedule::Schedule& s,
                                 const mesh::Mesh& m,
                                 const std::vector<model::StageRange>& partition,
                                 const std::vector<model::StageCost>& costs, int rows);

}  // namespace meshscope::exec
