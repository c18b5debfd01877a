// Fitting a scale on the op model from traces whose workload can be rebuilt.
#include "sim/predict/calibrate_model.h"

#include <algorithm>
#include <map>
#include <new>
#include <stdexcept>

#include "sim/cost/compute_model.h"
#include "sim/cost/fit.h"
#include "sim/predict/run_workload.h"
#include "sim/predict/workload_costs.h"

namespace meshscope::predict {
std::optional<PredictConfig> config_of_trace(const traces::Timeline& t,
                                             const std::string& hardware) {
  const traces::RunDescriptor& run = t.run;
  const traces::ModelKind kind = run.workload.kind;
  // The executor's workloads only: the op model of anything else is not what ran.
  if (kind != traces::ModelKind::kMlp && kind != traces::ModelKind::kChain &&
      kind != traces::ModelKind::kClassifier && kind != traces::ModelKind::kMoe) {
    return std::nullopt;
  }
  PredictConfig c;
  apply_workload(run.workload, c);
  c.global_batch = run.workload.batch;
  c.mesh = {std::max(run.mesh.dp, 1), std::max(run.mesh.pp, 1), std::max(run.mesh.tp, 1)};
  const int m = run.microbatches;
  if (c.global_batch <= 0 || m <= 0 || c.global_batch % (int64_t{m} * c.mesh.dp) != 0)
    return std::nullopt;
  c.micro_batch = c.global_batch / (int64_t{m} * c.mesh.dp);
  c.virtual_stages = run.stages > 0 ? std::max(1, run.stages / c.mesh.pp) : 1;
  if (const auto family = schedule::parse_family(run.family)) c.schedule = *family;
  c.gpu = hardware;
  c.precision = cost::Precision::kFp32;
  if (const std::optional<FootprintProblem> p = footprint_problem(c)) {
    const std::string key =
        p->key == "model.layers" ? "meshscope_run.workload.layers" : "meshscope_run.microbatches";
    throw std::invalid_argument("the run's workload (" + key + ") cannot be rebuilt: " + p->reason);
  }
  return c;
}

cost::Calibration calibrate_against_model(const std::vector<const traces::Timeline*>& timelines,
                                          const cost::Hardware& hw, cost::Precision precision,
                                          int* rebuilt) {
  const cost::ComputeModel model(hw, precision);
  std::map<traces::Phase, std::pair<std::vector<double>, std::vector<double>>> samples;
  std::map<traces::Phase, double> flops;  // the spans' own FLOPs (args.flops), for their mean rate
  int used = 0;
  for (const traces::Timeline* t : timelines) {
    const auto c = config_of_trace(*t, hw.name);
    if (!c) continue;
    WorkloadCosts w;
    try {
      w = workload_costs(*c);
    } catch (const std::bad_alloc&) {  // out of memory is said, not taken for "not rebuilt"
      throw;
    } catch (const std::exception&) {  // a shape the builders reject
      continue;
    }
    ++used;
    const auto windows = t->steps.size() >= 2
                             ? std::vector<traces::StepWindow>(t->steps.begin() + 1, t->steps.end())
                             : t->steps;
    const cost::ComputeTime computing(*t);
    for (const traces::Span& s : t->spans) {
      if (s.kind != traces::SpanKind::kCompute || s.stage < 0 ||
          s.stage >= static_cast<int>(w.stages.size()))
        continue;
      bool inside = windows.empty();
      for (const auto& win : windows)
        inside |= s.begin_ns >= win.begin_ns && s.end_ns <= win.end_ns;
      if (!inside) continue;
      // A span of no time, or none of it computing (its thread waited for a core throughout),
      // says nothing of a rate: the FLOPs fit skips it too (fit.cpp); a quarter of the forwards
      // at 0 ns had moved the scale from 1.36 to 1.13 without a word.
      const int64_t busy = computing.ns(s);
      if (s.end_ns <= s.begin_ns || busy <= 0) continue;
      const model::StageCost& st = w.stages[s.stage];
      std::vector<model::OpCost> ops;
      switch (s.phase) {
        case traces::Phase::kForward:
          ops = st.forward;
          break;
        case traces::Phase::kInputGrad:
          ops = st.input_grad;
          break;
        case traces::Phase::kWeightGrad:
          ops = st.weight_grad;
          break;
        case traces::Phase::kBackward:
          ops = st.input_grad;
          ops.insert(ops.end(), st.weight_grad.begin(), st.weight_grad.end());
          break;
        default:
          continue;
      }
      double x = 0;
      for (const model::OpCost& op : ops) x += model.op_seconds(op);
      samples[s.phase].first.push_back(x * 1e9);
      flops[s.phase] += s.flops;
      samples[s.phase].second.push_back(static_cast<double>(busy));
    }
  }
  // The FLOPs and link fits; where the spans carry no FLOPs and no transfer was timed, the op
  // model's fit below is all there is.
  cost::Calibration cal;
  try {
    cal = cost::fit_calibration(timelines, hw, precision);
  } catch (const std::invalid_argument&) {
    if (samples.empty()) throw;
    cal.hardware = hw.name;
  }
  if (!samples.empty()) cal.precision = std::string(cost::name(precision));
  for (const auto& [phase, xy] : samples) {
    const cost::LineFit f = cost::fit_line(xy.first, xy.second);
    if (f.slope <= 0) continue;
    cost::PhaseFit& p = cal.phases[static_cast<size_t>(phase)];
    p.model_scale = f.slope;
    p.overhead_ns = f.intercept;
    p.rms_error = f.rms_relative_error;
    // The spans predict prices this phase from: the scale's, which needs no FLOPs (spans without
    // args.flops had left the FLOPs fit's count at 0, and the phase unwritten).
    p.samples = static_cast<int>(xy.first.size());
    // The rate beside the scale is the spans' own, FLOPs over time. The marginal rate of the
    // FLOPs fit (its slope) is not what predict uses for such a phase, and where the spans' FLOPs
    // differ only by the loss's few percent it is the noise's: 44 and 19 GFLOP/s for two runs of
    // one shape whose spans ran at 19.6.
    double time_ns = 0;
    for (const double y : xy.second) time_ns += y;
    const double peak =
        hw.peak(precision) > 0 ? hw.peak(precision) : hw.peak(cost::Precision::kFp32);
    if (time_ns > 0 && flops[phase] > 0) {
      p.flops_per_s = flops[phase] / (time_ns * 1e-9);
      p.efficiency = peak > 0 ? p.flops_per_s / peak : 0;
    }
  }
  if (rebuilt) *rebuilt = used;
  return cal;
}

}  // namespace meshscope::predict
