// The stage costs of any configured model (GPT, VGG, or an executable workload: mlp, chain,
// classifier, moe) and their conversion to the engine's per-stage times on given hardware.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/cost/collective_model.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/framework.h"
#include "sim/cost/topology.h"
#include "sim/engine/engine.h"
#include "sim/model/stage_cost.h"
#include "sim/predict/config.h"

namespace meshscope::predict {

struct WorkloadCosts {
  std::vector<model::StageCost> stages;    // per stage, one tp rank, one microbatch
  std::vector<int64_t> dense_parameters;   // per stage, per tp rank
  std::vector<int64_t> expert_parameters;  // per stage, per tp rank (after the ep split)
  std::vector<int> layers;                 // per stage: transformer layers (1 for other models)
  // One transformer layer's parameters, per tp rank (gpt only; 0 for other models): what FSDP
  // wraps as a unit, the rest of a stage being its root's (Framework::held_unsharded).
  int64_t layer_parameters = 0;
  // Of those, the weights of the four linears that run in FP8 under options.fp8.
  int64_t layer_linear_weights = 0;
  double model_flops_per_microbatch = 0;  // forward + backward, all tp/cp ranks, no recompute
  int64_t tokens_per_sample = 1;          // seq for gpt; 1 otherwise
  std::string description;                // "gpt L=24 h=2304 heads=24 seq=2048 V=51200"
};

// Throws std::invalid_argument naming the config key that does not fit (e.g. heads over tp).
// `framework` sets the elementwise ops' memory passes; the first form loads c.framework.
WorkloadCosts workload_costs(const PredictConfig& c, const cost::Framework& framework);
WorkloadCosts workload_costs(const PredictConfig& c);

// Prices in-stage collectives (tp, cp, ep) on the groups of one representative rank.
class CommPricer {
 public:
  CommPricer(const cost::Hardware& hw, const cost::Topology& topo, int ep,
             const cost::Calibration* calibration);
  double seconds(const model::TpCollective& c) const;
  // The share of the device's SMs a collective's thread blocks hold while it runs: `sms` of
  // them, or with 0 the catalog's collective_ctas (NCCL's), over compute_units.
  double sm_share(int sms = 0) const;

 private:
  const cost::Hardware& hw_;
  cost::GroupSpan tp_, cp_, ep_;
  const cost::Calibration* calibration_;
};

// Seconds of the attention ops among `ops`: the window an overlapped in-stage collective hides in.
double attention_seconds(const std::vector<model::OpCost>& ops, const cost::ComputeModel& compute);

// What a collective running beside a GEMM adds to the GEMM's `gemm_s`: the collective's time
// beyond the GEMM, or, when the GEMM outlasts it, the GEMM's slowdown from the `sm_share` of the
// SMs the collective holds meanwhile.
double beside_gemm_seconds(double collective_s, double gemm_s, double sm_share);

// What a phase's in-stage collectives add to its compute stream: those that run alone in full,
// the overlapped ones beyond the phase's attention time (`phase_ops`), those beside a GEMM
// (TpCollective::beside) by beside_gemm_seconds over the shares of each they overlap, plus their
// tail (TpCollective::gemm_share, tail_share, sms). `with_weight_grad`: the phase runs the weight
// gradients too (B, not I alone), so a collective beside a weight-gradient GEMM runs beside it.
double exposed_tp_seconds(const std::vector<model::TpCollective>& collectives,
                          const std::vector<model::OpCost>& phase_ops,
                          const cost::ComputeModel& compute, const CommPricer& comm,
                          bool with_weight_grad);

// The engine's times for one stage: ops through the compute model, in-stage collectives added
// (overlapped ones only beyond the phase's attention time), STEP as a memory-bound pass.
engine::StageTiming stage_timing(const model::StageCost& stage, const cost::ComputeModel& compute,
                                 const CommPricer& comm, double optimizer_s);

cost::CollectiveKind collective_kind(schedule::ActionKind k);

}  // namespace meshscope::predict
