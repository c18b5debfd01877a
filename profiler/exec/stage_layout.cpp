// Local shapes and parameter offsets of a stage's linears.
#include "profiler/exec/stage_layout.h"

namespace meshscope::exec {

StageLayout make_stage_layout(const model::Workload& w, const model::StageRange& range, int stage,
                              int num_stages, int tp, int tp_rank, int rows, int microbatches,
                              const model::StageCost& cost,
                              std::vector<capture::InnerInfo>& inner) {
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
  size_t offset = 0;
  for (int u = range.first_unit; u < range.end_unit; ++u) {
    const model::Unit& unit = w.units[u];
    s.units.push_back(
        {static_cast<int>(s.linears.size()), static_cast<int>(unit.linears.size()), unit.residual});
    for (const model::LinearSpec& spec : unit.linears) {
      LinearLayout l;
      l.global_index = global++;
      l.in = model::local_in(spec, tp);
      l.out = model::local_out(spec, tp);
      l.bias = spec.split == model::TpSplit::kRow ? spec.out : l.out;
      l.act = spec.act;
      l.split = spec.split;
      l.needs_dx = w.spec.data_gradient || !(s.first && s.linears.empty());
      const int64_t fwd_bytes = int64_t(sizeof(float)) * rows * l.out;
      const int64_t bwd_bytes = int64_t(sizeof(float)) * rows * l.in;
      if (tp > 1 && l.split == model::TpSplit::kRow) {
        l.fwd_inner = static_cast<int>(inner.size());
        inner.push_back({"tp all-reduce " + spec.name + " s" + std::to_string(stage),
                         mesh::GroupKind::kTp, traces::SpanKind::kCollective, fwd_bytes,
                         traces::CollectiveOp::kAllReduce});
      }
      if (tp > 1 && l.split == model::TpSplit::kColumn && l.needs_dx) {
        l.bwd_inner = static_cast<int>(inner.size());
        inner.push_back({"tp all-reduce " + spec.name + ".dgrad s" + std::to_string(stage),
                         mesh::GroupKind::kTp, traces::SpanKind::kCollective, bwd_bytes,
                         traces::CollectiveOp::kAllReduce});
      }
      l.w_offset = offset;
      offset += size_t(l.in) * l.out;
      l.b_offset = offset;
      offset += l.bias;
      s.linears.push_back(l);
    }
  }
  s.param_count = offset;
  s.input_dim = s.linears.front().in;
  s.output_dim = s.linears.back().out;
  return s;
}

}  // namespace meshscope::exec
