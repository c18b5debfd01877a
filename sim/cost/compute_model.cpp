// The roofline-with-efficiency op time model.
#include "sim/cost/compute_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace meshscope::cost {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Independent GEMMs of the same shape folded into one op (attention heads, experts).
int64_t batch_of(const model::OpCost& op) {
  const double one =
      2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
  return one > 0 ? std::max<int64_t>(1, std::llround(op.flops / one)) : 1;
}

}  // namespace

namespace {

// gemm_efficiency's shape function at a best share `max` and a `k_half`.
double shape_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k, int64_t batch,
                        double max, double k_half) {
  const Efficiency& e = hw.efficiency;
  if (m <= 0 || n <= 0 || k <= 0) return max;
  const int64_t units = std::max(1, hw.compute_units);
  // Libraries pick the tile per shape: try the catalog's tile and smaller ones, each smaller tile
  // paying for its lower data reuse. The reuse factors 0.95, 0.85 and 0.7 are assumptions (a
  // smaller tile reads more operand bytes per FLOP; no public table gives the factor per tile).
  struct Tile {
    int64_t tm, tn;
    double reuse;
  };
  const int64_t TM = e.tile_m, TN = e.tile_n;
  const Tile tiles[] = {{TM, TN, 1.0},      {TN, TM, 1.0},          {TM, TN / 2, 0.95},
                        {TM / 2, TN, 0.95}, {TM / 2, TN / 2, 0.85}, {TM / 2, TN / 4, 0.7}};
  double best = 0;
  for (const Tile& t : tiles) {
    if (t.tm < 1 || t.tn < 1) continue;
    const int64_t tm = ceil_div(m, t.tm), tn = ceil_div(n, t.tn);
    const double tile_util = static_cast<double>(m) * static_cast<double>(n) /
                             (static_cast<double>(tm * t.tm) * static_cast<double>(tn * t.tn));
    const int64_t tiles = tm * tn * std::max<int64_t>(1, batch);
    // Too few tiles for the units and a long reduction: libraries split k (split-K, stream-K),
    // each split at least kMinSplitK deep (256: an assumption, two 128-deep main-loop stages).
    constexpr int64_t kMinSplitK = 256;
    const int64_t split =
        std::clamp<int64_t>(units / tiles, 1, std::max<int64_t>(1, k / kMinSplitK));
    const int64_t count = tiles * split;
    const double wave_util =
        static_cast<double>(count) / static_cast<double>(ceil_div(count, units) * units);
    const double kk = static_cast<double>(k) / static_cast<double>(split);
    const double k_util = kk / (kk + k_half);
    best = std::max(best, t.reuse * tile_util * wave_util * k_util);
  }
  return max * best;
}

}  // namespace

double gemm_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k, int64_t batch) {
  return shape_efficiency(hw, m, n, k, batch, hw.efficiency.gemm_max, hw.efficiency.k_half);
}

double gemm_fp8_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k, int64_t batch) {
  return shape_efficiency(hw, m, n, k, batch, hw.efficiency.gemm_fp8_max, hw.efficiency.fp8_k_half);
}

double attention_sequence_factor(const Hardware& hw, int64_t query_tokens) {
  const int64_t ref = hw.efficiency.attention_seq;
  if (ref <= 0 || query_tokens <= 0) return 1.0;
  const auto share = [](double tokens) {
    const double n = tokens / kAttentionQueryBlock;
    return n / (n + kAttentionBlockOverhead);
  };
  return share(static_cast<double>(query_tokens)) / share(static_cast<double>(ref));
}

double attention_dropout_overhead(int64_t query_tokens, bool backward) {
  // Lengths 1,024 ... 65,536 (2^10 ... 2^16); docs/ACCURACY.md item 36's table.
  static constexpr double kForward[] = {0.213, 0.210, 0.236, 0.243, 0.246, 0.248, 0.247};
  static constexpr double kBackward[] = {0.123, 0.189, 0.212, 0.228, 0.237, 0.241, 0.243};
  const double* o = backward ? kBackward : kForward;
  constexpr int kLast = 6;
  const double x = std::log2(static_cast<double>(std::max<int64_t>(1, query_tokens))) - 10;
  if (x <= 0) return o[0];
  if (x >= kLast) return o[kLast];
  const int i = static_cast<int>(x);
  return o[i] + (x - i) * (o[i + 1] - o[i]);
}

AttentionKernel kernel_class_on(const Hardware& hw, AttentionKernel k) {
  return k == AttentionKernel::kFlash3 && hw.efficiency.attention_flash3 <= 0
             ? AttentionKernel::kFlash2
             : k;
}

double attention_dropout_share(AttentionKernel kernel, const model::OpCost& op) {
  if (!op.dropout || op.k <= 0) return 0;
  const double d = static_cast<double>(op.k);
  switch (kernel) {
    case AttentionKernel::kFlash1:
      return attention_dropout_overhead(op.m, op.backward) * 64.0 / d;
    case AttentionKernel::kFlash2:
      return kFlash2DropoutShareAt128 * 128.0 / d;
    case AttentionKernel::kFlash3:
      return kFusedDropoutShareAt128 * 128.0 / d;
    default:
      return 0;
  }
}

ComputeModel::ComputeModel(const Hardware& hw, Precision precision, const Calibration* calibration,
                           AttentionKernel attention)
    : hw_(hw),
      precision_(precision),
      peak_(hw.peak(precision)),
      attention_kernel_(kernel_class_on(hw, attention)) {
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
  // Tensor-core work at the power limit runs at the sustained share of its burst rate (the
  // catalog's `sustained`: a training step keeps the GPU at its power limit, where the SM clock
  // settles below the boost clock the burst figures were measured at).
  const double sustained = hw_.efficiency.sustained;
  switch (op.kind) {
    case model::OpKind::kGemm:
      return sustained * (op.fp8 ? gemm_fp8_efficiency(hw_, op.m, op.n, op.k, batch_of(op))
                                 : gemm_efficiency(hw_, op.m, op.n, op.k, batch_of(op)));
    case model::OpKind::kConv:
      return sustained * hw_.efficiency.conv *
             gemm_efficiency(hw_, op.m, op.n, op.k, batch_of(op)) / hw_.efficiency.gemm_max;
    case model::OpKind::kAttention: {
      const double rate =
          sustained * attention_sequence_factor(hw_, op.m) *
          (op.backward && hw_.efficiency.attention_backward > 0 ? hw_.efficiency.attention_backward
                                                                : hw_.efficiency.attention);
      return rate / (1 + attention_dropout_share(attention_kernel_, op));
    }
    default:
      // Elementwise, norms and losses are memory-bound; their FLOPs run at the vector rate.
      return hw_.efficiency.gemm_max;
  }
}

double ComputeModel::op_seconds(const model::OpCost& op) const {
  // An FP8 GEMM runs against the FP8 peak (options.fp8 is refused where the device has none).
  const double peak = op.fp8 && op.kind == model::OpKind::kGemm ? hw_.peak_fp8 : peak_;
  const double compute = op.flops > 0 ? op.flops / (peak * efficiency(op)) : 0.0;
  const double memory = stream_seconds(op.bytes);
  return std::max(compute, memory) + hw_.launch_overhead_ns * 1e-9;
}

double ComputeModel::phase_seconds(const std::vector<model::OpCost>& ops,
                                   traces::Phase phase) const {
  if (ops.empty()) return 0.0;
  if (calibrated_) {
    // A profile of a 1F1B run has B but no I or W spans, a zero-bubble one the reverse: the
    // backward's rate stands in for its halves and the other way round.
    using traces::Phase;
    const PhaseFit* fit = &calibration_.phase(phase);
    double overhead_share = 1;
    if (!fit->fitted() && (phase == Phase::kInputGrad || phase == Phase::kWeightGrad)) {
      fit = &calibration_.phase(Phase::kBackward);
      overhead_share = 0.5;
    }
    if (!fit->fitted() && phase == Phase::kBackward) {
      fit = &calibration_.phase(Phase::kInputGrad);
      overhead_share = 2;
    }
    if (fit->model_scale > 0) {
      double s = 0;
      for (const model::OpCost& op : ops) s += op_seconds(op);
      return overhead_share * fit->overhead_ns * 1e-9 + fit->model_scale * s;
    }
    if (fit->flops_per_s > 0)
      return overhead_share * fit->overhead_ns * 1e-9 + model::total_flops(ops) / fit->flops_per_s;
  }
  double s = 0;
  for (const model::OpCost& op : ops) s += op_seconds(op);
  return s;
}

double ComputeModel::backward_seconds(const std::vector<model::OpCost>& input_grad,
                                      const std::vector<model::OpCost>& weight_grad) const {
  using traces::Phase;
  // The input-gradient rate for the whole backward priced its weight-gradient GEMMs at it: on a
  // CPU profile, where the two fits differ fourfold, 1F1B ran twice as slow as measured.
  if (calibrated_ && !calibration_.phase(Phase::kBackward).fitted() &&
      calibration_.phase(Phase::kInputGrad).fitted() &&
      calibration_.phase(Phase::kWeightGrad).fitted())
    return phase_seconds(input_grad, Phase::kInputGrad) +
           phase_seconds(weight_grad, Phase::kWeightGrad);
  std::vector<model::OpCost> both = input_grad;
  both.insert(both.end(), weight_grad.begin(), weight_grad.end());
  return phase_seconds(both, Phase::kBackward);
}

double ComputeModel::stream_seconds(double bytes) const {
  if (bytes <= 0) return 0.0;
  return bytes / (hw_.memory_bandwidth_bytes_per_s * hw_.efficiency.memory);
}

}  // namespace meshscope::cost
