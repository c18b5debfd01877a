// Compiling a Schedule into per-rank plans, with the checks that make the hot loop trust them.
#include "profiler/exec/rank_plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "sim/schedule/action_span.h"

namespace meshscope::exec {
namespace {

using schedule::ActionKind;

std::string where(int rank, size_t index, const schedule::Action& a) {
  return "rank " + std::to_string(rank) + " action " + std::to_string(index) + " '" +
         schedule::to_string(a) + "'";
}

[[noreturn]] void fail(int rank, size_t index, const schedule::Action& a, const std::string& why) {
  throw std::invalid_argument("schedule: " + where(rank, index, a) + ": " + why);
}

// The F, B and I of stages with moe blocks, in program order: (index, kind, stage, microbatch).
std::vector<std::tuple<size_t, ActionKind, int, int>> expert_actions(const RankPlan& p,
                                                                     const schedule::Schedule& s,
                                                                     int rank) {
  std::vector<std::tuple<size_t, ActionKind, int, int>> out;
  for (size_t i = 0; i < p.actions.size(); ++i) {
    const PlannedAction& pa = p.actions[i];
    const bool exchanges = pa.kind == ActionKind::kForward || pa.kind == ActionKind::kBackward ||
                           pa.kind == ActionKind::kInputGrad;
    if (exchanges && !p.stages[pa.local_stage].moe.empty())
      out.emplace_back(i, pa.kind, s.ranks[rank][i].stage, pa.microbatch);
  }
  return out;
}

// A moe block's all-to-alls pair the ep group's members by their order: every member must run the
// moe stages' F, B and I in the same order, or tokens of one microbatch would meet another's.
void check_same_expert_order(const schedule::Schedule& s, const mesh::Mesh& m,
                             const std::vector<RankPlan>& plans) {
  for (const RankPlan& p : plans) {
    const int first = m.peer_in_group(mesh::GroupKind::kEp, p.rank, 0);
    if (first == p.rank) continue;
    const auto mine = expert_actions(p, s, p.rank);
    const auto theirs = expert_actions(plans[first], s, first);
    for (size_t k = 0; k < std::max(mine.size(), theirs.size()); ++k) {
      if (k < mine.size() && k < theirs.size() && std::get<1>(mine[k]) == std::get<1>(theirs[k]) &&
          std::get<2>(mine[k]) == std::get<2>(theirs[k]) &&
          std::get<3>(mine[k]) == std::get<3>(theirs[k]))
        continue;
      const std::string other =
          k < theirs.size()
              ? "'" + schedule::to_string(s.ranks[first][std::get<0>(theirs[k])]) + "'"
              : "nothing";
      if (k >= mine.size()) {
        throw std::invalid_argument(
            "schedule: rank " + std::to_string(p.rank) + " runs " + std::to_string(mine.size()) +
            " moe-stage computes, rank " + std::to_string(first) + " of its ep group " +
            std::to_string(theirs.size()) + ": their expert all-to-alls would not pair");
      }
      fail(p.rank, std::get<0>(mine[k]), s.ranks[p.rank][std::get<0>(mine[k])],
           "rank " + std::to_string(first) + " of its ep group runs " + other +
               " at this point: with ep > 1 the expert all-to-alls pair the ep group's moe-stage "
               "computes by order, so every member must run them in the same order");
    }
  }
}

}  // namespace

void check_expert_parallel(const model::WorkloadSpec& w, int dp) {
  if (w.kind != model::WorkloadKind::kMoe) {
    if (w.ep != 1) throw std::invalid_argument("run: --ep needs the moe model");
    return;
  }
  if (w.ep < 1 || dp % w.ep != 0) {
    throw std::invalid_argument("run: ep=" + std::to_string(w.ep) +
                                " must divide dp=" + std::to_string(dp) +
                                " (an ep group is ep of the dp replicas; the experts are "
                                "replicated over the dp / ep groups)");
  }
}

mesh::MeshShape run_mesh(const mesh::MeshShape& schedule_mesh, const model::WorkloadSpec& w) {
  check_expert_parallel(w, schedule_mesh.dp);
  mesh::MeshShape shape = schedule_mesh;
  shape.ep = w.kind == model::WorkloadKind::kMoe ? w.ep : 1;
  return shape;
}

int64_t p2p_tag(ActionKind kind, int stage, int microbatch, int microbatches) {
  const bool backward = kind == ActionKind::kSendBackward || kind == ActionKind::kRecvBackward;
  // Name the message after the stage that receives it, so both sides compute the same tag.
  int receiver = stage;
  if (kind == ActionKind::kSendForward) receiver = stage + 1;
  if (kind == ActionKind::kSendBackward) receiver = stage - 1;
  return (int64_t{receiver} * microbatches + microbatch) * 2 + (backward ? 1 : 0);
}

std::vector<RankPlan> make_plans(const model::Workload& w, const schedule::Schedule& s,
                                 const mesh::Mesh& m,
                                 const std::vector<model::StageRange>& partition,
                                 const std::vector<model::StageCost>& costs, int rows) {
  const int num_stages = s.num_stages, mbs = s.num_microbatches;
  if (m.shape().ep != run_mesh(m.shape(), w.spec).ep) {  // run_mesh checks ep against dp too
    throw std::invalid_argument("run: the backend's mesh has ep=" + std::to_string(m.shape().ep) +
                                " but the workload ep=" + std::to_string(w.spec.ep) +
                                " (exec::run_mesh gives a run's mesh)");
  }
  std::vector<RankPlan> plans(m.size());
  for (int r = 0; r < m.size(); ++r) {
    RankPlan& p = plans[r];
    p.rank = r;
    p.coord = m.coord_of(r);
    p.local_of.assign(num_stages, -1);
    for (int st = 0; st < num_stages; ++st) {
      if (s.stage_owner[st] != p.coord.pp) continue;
      p.local_of[st] = static_cast<int>(p.stages.size());
      p.stages.push_back(
          make_stage_layout(w, partition[st], st, num_stages, m, r, rows, mbs, costs[st], p.inner));
    }
    const auto& program = s.ranks[r];
    for (size_t i = 0; i < program.size(); ++i) {
      const schedule::Action& a = program[i];
      if (a.stage < 0 || a.stage >= num_stages) {
        fail(r, i, a,
             "stage " + std::to_string(a.stage) + " does not exist (" + std::to_string(num_stages) +
                 " stages)");
      }
      const int local = p.local_of[a.stage];
      if (local < 0) {
        fail(r, i, a,
             "stage " + std::to_string(a.stage) + " lives on pp rank " +
                 std::to_string(s.stage_owner[a.stage]) + ", not on this rank (pp " +
                 std::to_string(p.coord.pp) + ")");
      }
      const StageLayout& st = p.stages[local];
      PlannedAction pa;
      pa.kind = a.kind;
      pa.local_stage = local;
      pa.microbatch = a.microbatch;
      const bool per_microbatch = schedule::is_compute(a.kind) || schedule::is_p2p(a.kind);
      if (per_microbatch && (a.microbatch < 0 || a.microbatch >= mbs)) {
        fail(r, i, a,
             "microbatch " + std::to_string(a.microbatch) + " is outside [0, " +
                 std::to_string(mbs) + ")");
      }
      capture::ActionInfo info;
      info.action = a;
      info.index = static_cast<int>(i);
      info.label = schedule::span_label(a);
      info.phase = schedule::phase_of(a.kind);
      info.span_kind = schedule::span_kind_of(a.kind);
      if (schedule::is_p2p(a.kind)) {
        const bool fwd_dir =
            a.kind == ActionKind::kSendForward || a.kind == ActionKind::kRecvBackward;
        const int other = fwd_dir ? a.stage + 1 : a.stage - 1;
        if (other < 0 || other >= num_stages) {
          fail(r, i, a, "there is no stage " + std::to_string(other) + " to talk to");
        }
        const int peer = m.rank_of({p.coord.dp, s.stage_owner[other], p.coord.tp});
        if (a.peer >= 0 && a.peer != peer) {
          fail(r, i, a,
               "names peer rank " + std::to_string(a.peer) + " but stage " + std::to_string(other) +
                   " is on rank " + std::to_string(peer));
        }
        // Activations cross a boundary forward, gradients of the same shape come back.
        const bool at_input =
            a.kind == ActionKind::kRecvForward || a.kind == ActionKind::kSendBackward;
        pa.bytes = at_input ? st.input_bytes() : st.output_bytes();
        if (a.bytes > 0 && static_cast<size_t>(a.bytes) != pa.bytes) {
          fail(r, i, a,
               "moves " + std::to_string(a.bytes) + " bytes but the workload's stage " +
                   std::to_string(a.stage) + " boundary carries " + std::to_string(pa.bytes) +
                   " per microbatch");
        }
        pa.peer = peer;
        pa.tag = p2p_tag(a.kind, a.stage, a.microbatch, mbs);
        info.peer = peer;
        info.tag = pa.tag;
      } else if (a.kind == ActionKind::kAllToAll) {
        // A schedule-level all-to-all over any group: `bytes` (default: the stage's output of a
        // microbatch) is each member's send buffer, split in equal blocks, one per member.
        const auto members = static_cast<size_t>(m.extent(a.group));
        pa.group = a.group;
        pa.bytes = a.bytes > 0 ? static_cast<size_t>(a.bytes) : st.output_bytes();
        if (pa.bytes % (sizeof(float) * members) != 0) {
          fail(r, i, a,
               "exchanges " + std::to_string(pa.bytes) + " bytes, which do not split into " +
                   std::to_string(members) + " equal blocks of floats (the " +
                   std::string(mesh::name(a.group)) + " group has " + std::to_string(members) +
                   " members)");
        }
        pa.block_floats = pa.bytes / sizeof(float) / members;
        StageLayout& held = p.stages[local];
        held.exchange_floats = std::max(held.exchange_floats, pa.bytes / sizeof(float));
      } else if (schedule::is_collective(a.kind)) {
        if (a.kind != ActionKind::kAllReduce || a.group != mesh::GroupKind::kDp) {
          fail(r, i, a,
               "the executor runs gradient all-reduces over dp and all-to-alls over any group "
               "(tp collectives happen inside F and B)");
        }
        pa.group = a.group;
        pa.bytes = st.dp_reduced_count * sizeof(float);
        if (a.bytes > 0 && static_cast<size_t>(a.bytes) != pa.bytes) {
          fail(r, i, a,
               "reduces " + std::to_string(a.bytes) + " bytes but stage " +
                   std::to_string(a.stage) + " holds " + std::to_string(pa.bytes) +
                   " bytes of gradients per tp rank" +
                   (st.dp_reduced_count < st.param_count
                        ? " to reduce over dp (its experts' reduce over edp)"
                        : ""));
        }
      }
      info.bytes = static_cast<int64_t>(pa.bytes);
      switch (a.kind) {
        case ActionKind::kForward:
          info.flops = st.cost.forward_flops();
          pa.activation_delta = st.cost.activation_bytes;
          break;
        case ActionKind::kBackward:
          info.flops = st.cost.input_grad_flops() + st.cost.weight_grad_flops();
          pa.activation_delta = -st.cost.activation_bytes;
          break;
        case ActionKind::kInputGrad:
          info.flops = st.cost.input_grad_flops();
          pa.activation_delta = -(st.cost.activation_bytes - st.cost.weight_grad_bytes);
          break;
        case ActionKind::kWeightGrad:
          info.flops = st.cost.weight_grad_flops();
          pa.activation_delta = -st.cost.weight_grad_bytes;
          break;
        case ActionKind::kOptimizerStep:
          info.flops = 2.0 * st.param_count;
          break;
        default:
          break;
      }
      p.actions.push_back(pa);
      p.infos.push_back(std::move(info));
    }
  }
  for (const RankPlan& receiver : plans) {
    for (const PlannedAction& pa : receiver.actions) {
      if (schedule::is_recv(pa.kind) && pa.peer != receiver.rank) {
        plans[pa.peer].peer_recv_orders[receiver.rank].push_back(pa.tag);
      }
    }
  }
  if (m.shape().ep > 1) check_same_expert_order(s, m, plans);
  return plans;
}

}  // namespace meshscope::exec
