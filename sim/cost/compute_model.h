// Time of one op on one device: max(FLOPs / (peak x efficiency), bytes / (memory bandwidth x
// memory efficiency)) + launch overhead, with the efficiency of a GEMM a function of its shape.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/cost/hardware.h"
#include "sim/model/stage_cost.h"
#include "traces/timeline.h"

namespace meshscope::cost {

// GEMM efficiency C[m x n] = A[m x k] B[k x n] (the documented model):
//   eff = gemm_max x tile_util x wave_util x k / (k + k_half)
//   tile_util = m n / (ceil(m/tile_m) tile_m  ceil(n/tile_n) tile_n)   (padding of edge tiles)
//   wave_util = tiles / (ceil(tiles / units) units)                     (last partial wave)
// as in NVIDIA's "Matrix Multiplication Background" guide (tile and wave quantization); k_half
// models the main loop's prologue/epilogue cost that small reductions cannot amortise.
double gemm_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k);

class ComputeModel {
 public:
  // `calibration` may be null; when given, phases it fitted use its rate instead of the ops model.
  ComputeModel(const Hardware& hw, Precision precision, const Calibration* calibration = nullptr);

  double efficiency(const model::OpCost& op) const;  // fraction of peak for compute-bound ops
  double op_seconds(const model::OpCost& op) const;
  // Sum over ops, or, for a calibrated phase, overhead + total FLOPs / fitted rate.
  double phase_seconds(const std::vector<model::OpCost>& ops, traces::Phase phase) const;
  // A memory-bound pass over `bytes` (optimizer update, copies).
  double stream_seconds(double bytes) const;

  const Hardware& hardware() const { return hw_; }
  Precision precision() const { return precision_; }
  double peak_flops() const { return peak_; }

 private:
  Hardware hw_;
  Precision precision_;
  double peak_;
  Calibration calibration_;
  bool calibrated_ = false;
};

}  // namespace meshscope::cost
