// Lowering compute orders into transfers, dp all-reduces and steps (see lowering.h).
#include "sim/schedule/lowering.h"

#include <algorithm>
#include <utility>

#include "sim/schedule/placement.h"

namespace meshscope::schedule {
namespace {

int64_t pick(const std::vector<int64_t>& bytes, int stage) {
  if (bytes.empty()) return 0;
  if (bytes.size() == 1) return bytes[0];
  return bytes[stage];
}

bool is_grad_in(ActionKind k) { return k == ActionKind::kBackward || k == ActionKind::kInputGrad; }

}  // namespace

Lowering::Lowering(const Schedule& s, std::vector<int64_t> activation_bytes,
                   std::vector<int64_t> gradient_bytes, bool reduce_beyond_mesh)
    : s_(s),
      mesh_(s.mesh),
      activation_bytes_(std::move(activation_bytes)),
      gradient_bytes_(std::move(gradient_bytes)),
      reduce_beyond_mesh_(reduce_beyond_mesh) {}

std::vector<Action> Lowering::lower(int rank, const std::vector<Action>& order,
                                    std::vector<int>* block_start) const {
  std::vector<int> last_grad(s_.num_stages, -1);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i].kind == ActionKind::kBackward || order[i].kind == ActionKind::kWeightGrad) {
      last_grad[order[i].stage] = static_cast<int>(i);
    }
  }
  const mesh::MeshCoord at = mesh_.coord_of(rank);
  std::vector<Action> out;
  out.reserve(order.size() * 2 + 2 * s_.num_stages);
  if (block_start) block_start->assign(order.size() + 1, 0);
  size_t i = 0;
  while (i < order.size()) {
    size_t end = i + 1;  // [i, end): one action, or one OVERLAP_F_B group
    while (end < order.size() && order[end - 1].overlap_next) ++end;
    if (block_start)
      std::fill(block_start->begin() + static_cast<std::ptrdiff_t>(i),
                block_start->begin() + static_cast<std::ptrdiff_t>(end),
                static_cast<int>(out.size()));
    for (size_t k = i; k < end; ++k) {
      if (order[k].kind == ActionKind::kForward)
        transfer(at, ActionKind::kRecvForward, order[k], &out);
      if (is_grad_in(order[k].kind)) transfer(at, ActionKind::kRecvBackward, order[k], &out);
    }
    for (size_t k = i; k < end; ++k) out.push_back(order[k]);
    for (size_t k = i; k < end; ++k) {
      if (order[k].kind == ActionKind::kForward)
        transfer(at, ActionKind::kSendForward, order[k], &out);
      if (is_grad_in(order[k].kind)) transfer(at, ActionKind::kSendBackward, order[k], &out);
    }
    for (size_t k = i; k < end; ++k) {
      if (last_grad[order[k].stage] == static_cast<int>(k)) finish_stage(order[k].stage, &out);
    }
    i = end;
  }
  if (block_start) block_start->back() = static_cast<int>(out.size());
  return out;
}

// Adds the transfer of `kind` for compute `a` when the neighbour stage exists on another rank.
void Lowering::transfer(const mesh::MeshCoord& at, ActionKind kind, const Action& a,
                        std::vector<Action>* out) const {
  Action t{.kind = kind, .stage = a.stage, .microbatch = a.microbatch};
  const int other = p2p_peer_stage(t);
  if (other < 0 || other >= s_.num_stages || same_owner(s_, a.stage, other)) return;
  t.peer = *stage_rank(s_, mesh_, other, at);
  t.bytes = pick(activation_bytes_, std::min(a.stage, other));
  out->push_back(t);
}

void Lowering::finish_stage(int stage, std::vector<Action>* out) const {
  if (s_.mesh.dp > 1 || reduce_beyond_mesh_) {
    out->push_back(Action{.kind = ActionKind::kAllReduce,
                          .group = mesh::GroupKind::kDp,
                          .stage = stage,
                          .bytes = pick(gradient_bytes_, stage)});
  }
  out->push_back(Action{.kind = ActionKind::kOptimizerStep, .stage = stage});
}

}  // namespace meshscope::schedule
