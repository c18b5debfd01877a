// The roofline-with-efficiency op time model.
#include "sim/cost/compute_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace meshscope::cost {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

double gemm_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k) {
  const Efficiency& e = hw.efficiency;
  if (m <= 0 || n <= 0 || k <= 0) return e.gemm_max;
  const int64_t tm = ceil_div(m, e.tile_m);
  const int64_t tn = ceil_div(n, e.tile_n);
  const double tile_util = static_cast<double>(m) * static_cast<double>(n) /
                           (static_cast<double>(tm * e.tile_m) * static_cast<double>(tn * e.tile_n));
  const int64_t tiles = tm * tn;
  const int64_t units = std::max(1, hw.compute_units);
  const double wave_util =
      static_cast<double>(tiles) / static_cast<double>(ceil_div(tiles, units) * units);
  const double k_util = static_cast<double>(k) / (static_cast<double>(k) + e.k_half);
  return e.gemm_max * tile_util * wave_util * k_util;
}

ComputeModel::ComputeModel(const Hardware& hw, Precision precision, const Calibration* calibration)
    : hw_(hw), precision_(precision), peak_(hw.peak(precision)) {
  if (peak_ <= 0) {
    // Fall back to the nearest rate the catalog gives (a CPU has no bf16 tensor cores, say).
    for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kFp16, Precision::kTf32})
      if (hw.peak(p) > 0) {
        peak_ = hw.peak(p);
        break;
      }
  }
  if (peak_ <= 0) throw std::invalid_argument(hw.name + ": no peak_flops for any precision");
  if (calibration != nullptr) {
    calibration_ = *calibration;
    calibrated_ = true;
  }
}

double ComputeModel::efficiency(const model::OpCost& op) const {
  switch (op.kind) {
    case model::OpKind::kGemm:
      return gemm_efficiency(hw_, op.m, op.n, op.k);
    case model::OpKind::kConv:
      return hw_.efficiency.conv * gemm_efficiency(hw_, op.m, op.n, op.k) / hw_.efficiency.gemm_max;
    case model::OpKind::kAttention:
      return hw_.efficiency.attention;
    default:
      // Elementwise, norms and losses are memory-bound; their FLOPs run at the vector rate.
      return hw_.efficiency.gemm_max;
  }
}

double ComputeModel::op_seconds(const model::OpCost& op) const {
  const double compute = op.flops > 0 ? op.flops / (peak_ * efficiency(op)) : 0.0;
  const double memory = stream_seconds(op.bytes);
  return std::max(compute, memory) + hw_.launch_overhead_ns * 1e-9;
}

double ComputeModel::phase_seconds(const std::vector<model::OpCost>& ops,
                                   traces::Phase phase) const {
  if (ops.empty()) return 0.0;
  if (calibrated_) {
    const PhaseFit& fit = calibration_.phase(phase);
    if (fit.flops_per_s > 0) return fit.overhead_ns * 1e-9 + model::total_flops(ops) / fit.flops_per_s;
  }
  double s = 0;
  for (const model::OpCost& op : ops) s += op_seconds(op);
  return s;
}

double ComputeModel::stream_seconds(double bytes) const {
  if (bytes <= 0) return 0.0;
  return bytes / (hw_.memory_bandwidth_bytes_per_s * hw_.efficiency.memory);
}

}  // namespace meshscope::cost
