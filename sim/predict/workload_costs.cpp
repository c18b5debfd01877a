// Building stage costs for every model kind and turning them into engine times.
#include "sim/predict/workload_costs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "sim/cost/collective_model.h"
#include "sim/model/gpt.h"
#include "sim/model/partition.h"
#include "sim/model/vgg.h"
#include "sim/model/workload.h"
#include "sim/model/workload_cost.h"
#include "sim/schedule/families.h"

namespace meshscope::predict {
namespace {

// A stage's time in the engine's integer nanoseconds. Beyond 2^62 ns (146 years, the importers'
// bound too) llround has no defined result: a calibration whose model_scale was 1e15 gave a step
// faster than its scale of 1. Refused, naming the figures that can get there.
int64_t ns(double seconds) {
  const double v = seconds * 1e9;
  if (!(v >= 0 && v < 0x1p62)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", seconds);
    throw std::invalid_argument(std::string("a stage's time of ") + buf +
                                " s is outside what the simulator holds (0 to 146 years): a "
                                "calibration's model_scale or flops_per_s, or a hardware file's "
                                "peak_flops, is far from any device's");
  }
  return static_cast<int64_t>(std::llround(v));
}

WorkloadCosts gpt_costs(const PredictConfig& c, const cost::Framework& framework) {
  model::LayerParallel par;
  par.micro_batch = c.micro_batch;
  par.seq = c.gpt.seq;
  par.tp = c.mesh.tp;
  par.cp = c.cp;
  par.ep = c.ep;
  par.sequence_parallel = c.sequence_parallel;
  par.flash_attention = c.flash_attention;
  if (c.flash_attention && c.gpt.heads > 0)
    par.attention_head_dim = cost::kernel_head_dim(framework.flash, c.gpt.hidden / c.gpt.heads);
  par.recompute = c.recompute;
  par.recompute_every = c.recompute_every;
  par.element_bytes = cost::element_bytes(c.precision);
  par.passes = framework.passes;
  par.p2p_scatter_gather = framework.p2p_scatter_gather;
  par.recompute_early_stop = framework.recompute_early_stop;
  par.tp_backward_overlap = framework.tp_backward_overlap;
  par.qkv_split_grad = framework.qkv_split_grad;
  par.selective_recomputes_flash = framework.selective_recomputes_flash;
  par.hidden_dropout = framework.hidden_dropout;
  // Each fused class's dropout share is measured (docs/ACCURACY.md items 36 and 37).
  par.attention_dropout = c.flash_attention && framework.attention_dropout;
  par.tp_saves_gathered_input = framework.tp_saves_gathered_input;
  par.gqa_expand = framework.gqa_expand;
  par.fp8 = c.fp8;
  if (c.tp_comm_overlap)
    par.tp_comm_overlap = c.tp_comm_overlap_cfg ? c.tp_comm_overlap_cfg : framework.tp_comm_overlap;
  par.loss_forward_bytes = framework.loss_forward_bytes;
  par.loss_backward_bytes = framework.loss_backward_bytes;
  par.loss_saved_bytes = framework.loss_saved_bytes;
  par.loss_peak_bytes = framework.loss_peak();
  const int stages = c.mesh.pp * c.virtual_stages;
  const model::GptModel g = model::build_gpt(
      c.gpt, par, stages, c.layers_per_stage,
      schedule::stage_placement(schedule::info(c.schedule).placement, c.mesh.pp, stages));
  WorkloadCosts w;
  for (const model::GptStage& s : g.stages) {
    w.stages.push_back(s.cost);
    w.dense_parameters.push_back(s.dense_parameters);
    w.expert_parameters.push_back(s.expert_parameters);
    w.layers.push_back(s.layers);
  }
  w.model_flops_per_microbatch = g.model_flops_per_microbatch;
  w.layer_parameters = g.layer_parameters;
  w.layer_linear_weights = g.layer_linear_weights;
  w.tokens_per_sample = c.gpt.seq;
  w.description = "gpt L=" + std::to_string(c.gpt.layers) + " h=" + std::to_string(c.gpt.hidden) +
                  " heads=" + std::to_string(c.gpt.heads) + " seq=" + std::to_string(c.gpt.seq) +
                  " V=" + std::to_string(c.gpt.vocab) +
                  (c.gpt.experts > 0 ? " experts=" + std::to_string(c.gpt.experts) : "");
  return w;
}

WorkloadCosts vgg_costs(const PredictConfig& c) {
  if (c.mesh.tp != 1) throw std::invalid_argument("mesh.tp: the vgg model runs with tp = 1");
  const model::VggModel v = model::build_vgg(c.vgg, c.micro_batch, c.mesh.pp * c.virtual_stages,
                                             cost::element_bytes(c.precision));
  WorkloadCosts w;
  w.stages = v.stages;
  for (const model::StageCost& s : v.stages) {
    w.dense_parameters.push_back(s.parameters);
    w.expert_parameters.push_back(0);
  }
  w.model_flops_per_microbatch = v.model_flops_per_microbatch;
  w.description = "vgg16 image=" + std::to_string(c.vgg.image);
  return w;
}

WorkloadCosts executable_costs(const PredictConfig& c) {
  model::WorkloadSpec spec;
  // The two enums share their names (mlp, chain, classifier, moe).
  spec.kind = model::parse_workload_kind(name(c.model)).value_or(model::WorkloadKind::kClassifier);
  spec.layers = c.mlp_layers;
  spec.hidden = c.mlp_hidden;
  spec.batch = static_cast<int>(c.global_batch);
  spec.experts = c.moe_experts;
  spec.top_k = c.moe_top_k;
  spec.capacity_factor = c.moe_capacity_factor;
  spec.ep = c.model == ModelKind::kMoe ? c.ep : 1;
  const model::Workload wl = model::make_workload(spec);
  model::check_tp(wl, c.mesh.tp);
  const int stages = c.mesh.pp * c.virtual_stages;
  const auto ranges = model::partition_units(static_cast<int>(wl.units.size()), stages);
  WorkloadCosts w;
  w.stages = model::stage_costs(wl, ranges, c.mesh.tp, static_cast<int>(c.micro_batch));
  for (const model::StageCost& s : w.stages) {
    w.dense_parameters.push_back(s.parameters - s.expert_parameters);
    w.expert_parameters.push_back(s.expert_parameters);
    w.model_flops_per_microbatch +=
        (s.forward_flops() + s.input_grad_flops() + s.weight_grad_flops()) * c.mesh.tp;
  }
  w.description = wl.describe();
  return w;
}

}  // namespace

WorkloadCosts workload_costs(const PredictConfig& c, const cost::Framework& framework) {
  WorkloadCosts w;
  switch (c.model) {
    case ModelKind::kGpt:
      w = gpt_costs(c, framework);
      break;
    case ModelKind::kVgg:
      w = vgg_costs(c);
      break;
    default:
      w = executable_costs(c);
      break;
  }
  w.layers.resize(w.stages.size(), 1);
  return w;
}

WorkloadCosts workload_costs(const PredictConfig& c) { return workload_costs(c, framework_of(c)); }

cost::CollectiveKind collective_kind(schedule::ActionKind k) {
  switch (k) {
    case schedule::ActionKind::kAllGather:
      return cost::CollectiveKind::kAllGather;
    case schedule::ActionKind::kReduceScatter:
      return cost::CollectiveKind::kReduceScatter;
    case schedule::ActionKind::kAllToAll:
      return cost::CollectiveKind::kAllToAll;
    default:
      return cost::CollectiveKind::kAllReduce;
  }
}

CommPricer::CommPricer(const cost::Hardware& hw, const cost::Topology& topo, int ep,
                       const cost::Calibration* calibration)
    : hw_(hw),
      tp_(topo.span_of_dim(cost::MeshDim::kTp, 0)),
      cp_(topo.span_of_dim(cost::MeshDim::kCp, 0)),
      ep_(topo.span_of_dim(cost::MeshDim::kDp, 0, ep)),
      calibration_(calibration) {}

double CommPricer::seconds(const model::TpCollective& c) const {
  const cost::GroupSpan& span = c.axis == model::CommAxis::kTp   ? tp_
                                : c.axis == model::CommAxis::kCp ? cp_
                                                                 : ep_;
  return cost::collective_time(hw_, c.op, static_cast<double>(c.bytes), span, calibration_).seconds;
}

double attention_seconds(const std::vector<model::OpCost>& ops, const cost::ComputeModel& compute) {
  double t = 0;
  for (const model::OpCost& op : ops)
    if (op.kind == model::OpKind::kAttention) t += compute.op_seconds(op);
  return t;
}

double CommPricer::sm_share(int sms) const {
  return static_cast<double>(sms > 0 ? sms : hw_.collective_ctas) / std::max(1, hw_.compute_units);
}

double beside_gemm_seconds(double collective_s, double gemm_s, double sm_share) {
  // While both run, the GEMM has 1 - sm_share of the SMs: it ends at gemm_s + sm_share *
  // collective_s if the collective ends first, else the collective's end is the pair's.
  return std::max(collective_s - gemm_s, sm_share * collective_s);
}

double exposed_tp_seconds(const std::vector<model::TpCollective>& collectives,
                          const std::vector<model::OpCost>& phase_ops,
                          const cost::ComputeModel& compute, const CommPricer& comm,
                          bool with_weight_grad) {
  double exposed = 0, hidden = 0;
  for (const model::TpCollective& c : collectives) {
    const double s = comm.seconds(c);
    if (c.overlapped)
      hidden += s;
    else if (c.beside && (with_weight_grad || !c.beside_weight_grad))
      exposed +=
          beside_gemm_seconds(s * (1 - c.tail_share), compute.op_seconds(*c.beside) * c.gemm_share,
                              comm.sm_share(c.sms)) +
          s * c.tail_share;
    else
      exposed += s;
  }
  return exposed + std::max(0.0, hidden - attention_seconds(phase_ops, compute));
}

engine::StageTiming stage_timing(const model::StageCost& s, const cost::ComputeModel& compute,
                                 const CommPricer& comm, double optimizer_s) {
  auto comm_s = [&](const std::vector<model::TpCollective>& cs,
                    const std::vector<model::OpCost>& phase_ops, bool with_weight_grad) {
    return exposed_tp_seconds(cs, phase_ops, compute, comm, with_weight_grad);
  };
  engine::StageTiming t;
  const double f = compute.phase_seconds(s.forward, traces::Phase::kForward) +
                   comm_s(s.tp_forward, s.forward, false);
  const double i = compute.phase_seconds(s.input_grad, traces::Phase::kInputGrad) +
                   comm_s(s.tp_backward, s.input_grad, false);
  const double w = compute.phase_seconds(s.weight_grad, traces::Phase::kWeightGrad);
  t.forward_ns = ns(f);
  t.input_grad_ns = ns(i);
  t.weight_grad_ns = ns(w);
  // B runs I and W together: the sum of their ops, or a calibrated rate for whole backwards.
  t.backward_ns = ns(compute.backward_seconds(s.input_grad, s.weight_grad) +
                     comm_s(s.tp_backward, s.input_grad, true));
  t.optimizer_ns = ns(optimizer_s);
  t.forward_flops = s.forward_flops();
  t.input_grad_flops = s.input_grad_flops();
  t.weight_grad_flops = s.weight_grad_flops();
  t.activation_bytes = s.activation_bytes;
  t.weight_grad_bytes = s.weight_grad_bytes;
  t.p2p_bytes = s.output_bytes;
  return t;
}

}  // namespace meshscope::predict
