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

// GEMM efficiency of `batch` independent products C[m x n] = A[m x k] B[k x n] (the documented
// model, after NVIDIA's "Matrix Multiplication Background" guide on tile and wave quantization):
//   eff = gemm_max x max over tiles (reuse x tile_util x wave_util) x k / (k + k_half)
//   tile_util = m n / (ceil(m/tm) tm  ceil(n/tn) tn)           (padding of edge tiles)
//   wave_util = tiles / (ceil(tiles / units) units)              (the last, partial wave)
// over the catalog's tile (tile_m x tile_n, reuse 1), its transpose, halves (0.95) and quarters
// (0.85, 0.7), as libraries pick a tile per shape; k_half stands for the main loop's prologue and
// epilogue that short reductions cannot amortise. When there are fewer tiles than units, k is
// split (split-K: up to units / tiles ways, each at least 256 deep), multiplying the tiles and
// shortening each reduction.
double gemm_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k, int64_t batch = 1);

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
