// Local shapes and parameter offsets of a stage's linears and moe blocks.
#include "profiler/exec/stage_layout.h"

#include <stdexcept>
#include <string>

#include "sim/model/workload_cost.h"

namespace meshscope::exec {
namespace {

// The linears of a dense unit, with their tp shapes and tp collectives.
void add_dense_unit(const model::Unit& unit, int first_global, StageLayout& s,
                    std::vector<capture::InnerInfo>& inner, bool data_gradient) {
  s.units.push_back(
      {static_cast<int>(s.linears.size()), static_cast<int>(unit.linears.size()), unit.residual});
  const int tp = s.tp, rows = s.rows;
  int global = first_global;
  for (const model::LinearSpec& spec : unit.linears) {
    LinearLayout l;
    l.global_index = global++;
    l.in = model::local_in(spec, tp);
    l.out = model::local_out(spec, tp);
    l.bias = spec.split == model::TpSplit::kRow ? spec.out : l.out;
    l.act = spec.act;
    l.split = spec.split;
    l.needs_dx = data_gradient || !(s.first && s.linears.empty());
    const int64_t fwd_bytes = int64_t(sizeof(float)) * rows * l.out;
    const int64_t bwd_bytes = int64_t(sizeof(float)) * rows * l.in;
    if (tp > 1 && l.split == model::TpSplit::kRow) {
      l.fwd_inner = static_cast<int>(inner.size());
      inner.push_back({"tp all-reduce " + spec.name + " s" + std::to_string(s.stage),
                       mesh::GroupKind::kTp, traces::SpanKind::kCollective, fwd_bytes,
                       traces::CollectiveOp::kAllReduce});
    }
    if (tp > 1 && l.split == model::TpSplit::kColumn && l.needs_dx) {
      l.bwd_inner = static_cast<int>(inner.size());
      inner.push_back({"tp all-reduce " + spec.name + ".dgrad s" + std::to_string(s.stage),
                       mesh::GroupKind::kTp, traces::SpanKind::kCollective, bwd_bytes,
                       traces::CollectiveOp::kAllReduce});
    }
    s.linears.push_back(l);
  }
}

// A linear held whole (moe blocks run with tp = 1).
LinearLayout whole(const model::LinearSpec& spec, int global) {
  LinearLayout l;
  l.global_index = global;
  l.in = spec.in;
  l.out = spec.out;
  l.bias = spec.out;
  l.act = spec.act;
  l.expert = spec.expert;
  return l;
}

// A moe block: the router, then fc1 and fc2 of the experts of ep rank `ep_rank`; with ep > 1 its
// four all-to-alls over the ep group (moe_block.h).
void add_moe_unit(const model::Workload& w, const model::Unit& unit, int first_global, int ep_rank,
                  StageLayout& s, std::vector<capture::InnerInfo>& inner) {
  const model::WorkloadSpec& spec = w.spec;
  MoeUnitLayout m;
  m.router = static_cast<int>(s.linears.size());
  m.local_experts = model::local_experts(spec);
  m.experts = spec.experts;
  m.top_k = spec.top_k;
  m.capacity = model::expert_capacity(spec, s.rows);
  m.hidden = spec.hidden;
  m.ffn = unit.linears[model::moe_fc1(0)].out;
  m.ep = spec.ep;
  m.act = unit.linears[model::moe_fc1(0)].act;
  s.linears.push_back(whole(unit.linears[model::kMoeRouter], first_global + model::kMoeRouter));
  m.first_expert = static_cast<int>(s.linears.size());
  const int first = model::first_local_expert(spec, ep_rank);
  for (int e = first; e < first + m.local_experts; ++e) {
    for (const int i : {model::moe_fc1(e), model::moe_fc2(e)})
      s.linears.push_back(whole(unit.linears[i], first_global + i));
  }
  if (m.ep > 1) {
    const int64_t bytes = int64_t(sizeof(float)) * m.slots() * m.hidden;
    auto add = [&](const char* what) {
      inner.push_back({"ep all-to-all " + unit.name + "." + what + " s" + std::to_string(s.stage),
                       mesh::GroupKind::kEp, traces::SpanKind::kCollective, bytes,
                       traces::CollectiveOp::kAllToAll});
      return static_cast<int>(inner.size()) - 1;
    };
    m.dispatch_inner = add("dispatch");
    m.combine_inner = add("combine");
    m.combine_grad_inner = add("combine.grad");
    m.dispatch_grad_inner = add("dispatch.grad");
  }
  s.units.push_back({m.router, static_cast<int>(s.linears.size()) - m.router, unit.residual,
                     static_cast<int>(s.moe.size())});
  s.moe.push_back(m);
}

}  // namespace

StageLayout make_stage_layout(const model::Workload& w, const model::StageRange& range, int stage,
                              int num_stages, const mesh::Mesh& m, int rank, int rows,
                              int microbatches, const model::StageCost& cost,
                              std::vector<capture::InnerInfo>& inner) {
  const int tp = m.shape().tp, tp_rank = m.index_in_group(mesh::GroupKind::kTp, rank);
  const int ep_rank = m.index_in_group(mesh::GroupKind::kEp, rank);
  StageLayout s;
  s.stage = stage;
  s.first = stage == 0;
  s.last = stage == num_stages - 1;
  s.tp = tp;
  s.tp_rank = tp_rank;
  s.rows = rows;
  s.microbatches = microbatches;
  s.loss = w.loss;
  s.loss_scale = static_cast<float>(model::loss_scale(w));
  s.lr = w.spec.lr;
  s.cost = cost;
  int global = 0;
  for (int u = 0; u < range.first_unit; ++u) global += static_cast<int>(w.units[u].linears.size());
  for (int u = range.first_unit; u < range.end_unit; ++u) {
    const model::Unit& unit = w.units[u];
    if (unit.kind == model::UnitKind::kMoe) {
      add_moe_unit(w, unit, global, ep_rank, s, inner);
    } else {
      add_dense_unit(unit, global, s, inner, w.spec.data_gradient);
    }
    global += static_cast<int>(unit.linears.size());
  }
  // Dense parameters first, the experts' after them: ALLREDUCE(dp) sums a prefix.
  size_t offset = 0;
  for (const bool experts : {false, true}) {
    if (experts) s.dp_reduced_count = offset;
    for (LinearLayout& l : s.linears) {
      if ((l.expert >= 0) != experts) continue;
      l.w_offset = offset;
      offset += size_t(l.in) * l.out;
      l.b_offset = offset;
      offset += l.bias;
    }
  }
  s.param_count = offset;
  if (w.spec.ep <= 1) s.dp_reduced_count = s.param_count;
  if (int64_t(s.dp_reduced_count) != model::dp_reduced_parameters(cost, w.spec.ep) ||
      int64_t(s.param_count) != cost.parameters) {
    throw std::logic_error("stage " + std::to_string(stage) +
                           ": the layout's parameters differ from the stage cost's");
  }
  if (s.dp_reduced_count < s.param_count && m.extent(mesh::GroupKind::kEdp) > 1) {
    s.expert_reduce_inner = static_cast<int>(inner.size());
    inner.push_back({"edp all-reduce experts s" + std::to_string(stage), mesh::GroupKind::kEdp,
                     traces::SpanKind::kCollective,
                     int64_t(sizeof(float)) * int64_t(s.param_count - s.dp_reduced_count),
                     traces::CollectiveOp::kAllReduce});
  }
  s.input_dim = s.linears.front().in;
  s.output_dim = s.linears.back().out;
  return s;
}

}  // namespace meshscope::exec
