// Splitting a device's simulated step into the cost model's terms (breakdown.h).
#include "sim/predict/breakdown.h"

#include <iterator>
#include <map>
#include <string_view>
#include <utility>

#include "sim/predict/resolved.h"
#include "sim/predict/zero.h"

namespace meshscope::predict {
namespace {

using schedule::ActionKind;

Term term_of(const model::OpCost& op) {
  if (std::string_view(op.name).starts_with("recompute.")) return Term::kRecompute;
  if (op.fp8 && op.kind != model::OpKind::kGemm) return Term::kFp8Casts;
  switch (op.kind) {
    case model::OpKind::kGemm:
      return Term::kGemm;
    case model::OpKind::kNorm:
      return Term::kNorm;
    case model::OpKind::kAttention:
      return Term::kAttention;
    case model::OpKind::kLoss:
      return Term::kLoss;
    case model::OpKind::kConv:
      return Term::kConv;
    default:
      return Term::kElementwise;
  }
}

void add_ops(const std::vector<model::OpCost>& ops, const cost::ComputeModel& compute,
             TermSeconds& t) {
  for (const model::OpCost& op : ops) t[term_of(op)] += compute.op_seconds(op);
}

// The action's ops by term. Under a calibration, a fitted phase is priced as a whole (its
// overhead and fitted rate, ComputeModel::phase_seconds), not op by op: its time is split over
// the terms in the op model's proportions, so the terms add up to what the engine ran (GEMMs had
// read 147.5% of a calibrated CPU step and "other compute" -60%).
void add_action_ops(const std::vector<model::OpCost>& first,
                    const std::vector<model::OpCost>& second, double calibrated_s,
                    const cost::ComputeModel& compute, TermSeconds& t) {
  TermSeconds ops;
  add_ops(first, compute, ops);
  add_ops(second, compute, ops);
  const double model_s = ops.total();
  const double factor = compute.calibrated() && model_s > 0 ? calibrated_s / model_s : 1.0;
  for (size_t i = 0; i < ops.seconds.size(); ++i) t.seconds[i] += factor * ops.seconds[i];
}

}  // namespace

const char* name(Term t) {
  // In Term's order.
  static constexpr const char* kNames[] = {
      "gemm",           "elementwise",  "norm",      "attention",
      "loss",           "conv",         "recompute", "tp_communication",
      "sharded_copies", "weight_casts", "fp8_casts", "grad_accumulation",
      "optimizer_step"};
  static_assert(std::size(kNames) == static_cast<size_t>(Term::kCount));
  const auto i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "?";
}

double TermSeconds::total() const {
  double s = 0;
  for (double v : seconds) s += v;
  return s;
}

TermSeconds action_terms(const Resolved& r, int stage, ActionKind kind) {
  TermSeconds t;
  const model::StageCost& s = r.w.stages.at(static_cast<size_t>(stage));
  const double parameters =
      static_cast<double>(r.w.dense_parameters[stage] + r.w.expert_parameters[stage]);
  const PredictConfig& c = r.config;
  const ShardedCopies copies = sharded_copies(
      c.zero, c.data_parallel(), parameters, r.fw, r.compute,
      shards_once_a_step(c.zero, c.data_parallel(), c.mesh.pp, r.fw) ? c.microbatches() : 0);
  const WeightCasts casts = weight_casts(parameters, r.fw, r.compute);
  const bool input_grad = kind == ActionKind::kBackward || kind == ActionKind::kInputGrad;
  const bool weight_grad = kind == ActionKind::kBackward || kind == ActionKind::kWeightGrad;
  using traces::Phase;
  const std::vector<model::OpCost> none;
  if (kind == ActionKind::kForward) {
    add_action_ops(s.forward, none, r.compute.phase_seconds(s.forward, Phase::kForward), r.compute,
                   t);
    t[Term::kTpCommunication] +=
        exposed_tp_seconds(s.tp_forward, s.forward, r.compute, r.pricer, false);
    t[Term::kShardedCopies] += copies.gather_ns * 1e-9;
    t[Term::kWeightCasts] += casts.forward_ns * 1e-9;
  }
  if (kind == ActionKind::kBackward) {
    add_action_ops(s.input_grad, s.weight_grad,
                   r.compute.backward_seconds(s.input_grad, s.weight_grad), r.compute, t);
  } else if (input_grad) {
    add_action_ops(s.input_grad, none, r.compute.phase_seconds(s.input_grad, Phase::kInputGrad),
                   r.compute, t);
  } else if (weight_grad) {
    add_action_ops(s.weight_grad, none, r.compute.phase_seconds(s.weight_grad, Phase::kWeightGrad),
                   r.compute, t);
  }
  if (input_grad) {
    t[Term::kTpCommunication] +=
        exposed_tp_seconds(s.tp_backward, s.input_grad, r.compute, r.pricer, weight_grad);
    t[Term::kShardedCopies] += copies.backward_gather_ns * 1e-9;
  }
  if (weight_grad) {
    t[Term::kShardedCopies] += copies.reduce_ns * 1e-9;
    t[Term::kWeightCasts] += casts.backward_ns * 1e-9;
    t[Term::kGradAccumulation] +=
        grad_accumulation_ns(parameters, r.fw, r.config.precision, r.compute) * 1e-9;
  }
  if (kind == ActionKind::kOptimizerStep)
    t[Term::kOptimizerStep] = r.timings.at(static_cast<size_t>(stage)).optimizer_ns * 1e-9;
  return t;
}

Breakdown breakdown(const Resolved& r, int pp, const std::vector<schedule::Action>& program,
                    const engine::RankStats& stats, int64_t step_ns) {
  Breakdown b;
  b.known = true;
  b.pp = pp;
  b.step_s = step_ns * 1e-9;
  // Actions per (stage, kind) first: pricing an action's ops is the costly part (GEMM shapes), and
  // a program repeats each pair once per microbatch.
  std::map<std::pair<int, int>, int> count;
  for (const schedule::Action& a : program)
    if (schedule::is_compute(a.kind) || a.kind == ActionKind::kOptimizerStep)
      ++count[{a.stage, static_cast<int>(a.kind)}];
  for (const auto& [key, n] : count) {
    const TermSeconds t = action_terms(r, key.first, static_cast<ActionKind>(key.second));
    for (size_t i = 0; i < t.seconds.size(); ++i) b.busy.seconds[i] += n * t.seconds[i];
  }
  const double compute_s = stats.compute_ns * 1e-9;
  b.sm_held_s = stats.sm_held_ns * 1e-9;
  b.other_s = compute_s - b.busy.total() - b.sm_held_s;
  b.idle_s = b.step_s - compute_s;
  b.communication_s = stats.communication_ns * 1e-9;
  return b;
}

nlohmann::json to_json(const Breakdown& b) {
  nlohmann::json terms = nlohmann::json::object();
  for (size_t i = 0; i < b.busy.seconds.size(); ++i)
    terms[name(static_cast<Term>(i))] = b.busy.seconds[i];
  return {{"pp", b.pp},
          {"step_time_s", b.step_s},
          {"compute_s", terms},
          {"other_compute_s", b.other_s},
          {"collectives_sm_held_s", b.sm_held_s},
          {"idle_s", b.idle_s},
          {"communication_s", b.communication_s},
          {"dp_collectives",
           {{"wire_s", b.dp_collectives_wire_s},
            {"exposed_s", b.dp_collectives_exposed_s},
            {"charged_s", b.dp_collectives_charged_s}}}};
}

}  // namespace meshscope::predict
