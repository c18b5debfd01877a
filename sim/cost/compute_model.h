// Time of one op on one device: max(FLOPs / (peak x efficiency), bytes / (memory bandwidth x
// memory efficiency)) + launch overhead, with the efficiency of a GEMM a function of its shape.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cost/attention_kernel.h"
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
// The same for a GEMM of FP8 operands, as a fraction of the FP8 peak (Hardware::peak_fp8): the
// shape function with the entry's gemm_fp8_max and fp8_k_half (docs/ACCURACY.md item 50).
double gemm_fp8_efficiency(const Hardware& hw, int64_t m, int64_t n, int64_t k, int64_t batch = 1);

// A causal FlashAttention kernel gives each block of kAttentionQueryBlock queries to one thread
// block, which runs over the key blocks up to the diagonal: the diagonal block is computed in full
// though half of it is masked, and each query block has costs of its own (loading Q, rescaling and
// writing O and the softmax statistics). With n = L / kAttentionQueryBlock query blocks the rate
// goes as n / (n + kAttentionBlockOverhead). kAttentionBlockOverhead 4.2: least squares on the log
// of FlashAttention-2's causal forward rate relative to its rate at 8,192 tokens, over the timing
// table in flash-attention issue 307 (Triton's fused-attention tutorial, batch 4, 32 heads of 128,
// 1,024 to 16,384 tokens; rms 1.4%; the same post's head dim 64 table gives 4.8; docs/ACCURACY.md
// item 35). FA2's curve stands for the FA1 and FA3 classes (an assumption).
inline constexpr double kAttentionQueryBlock = 128;
inline constexpr double kAttentionBlockOverhead = 4.2;

// The share of the catalog's attention rates a fused kernel keeps at `query_tokens` per sequence:
// (n / (n + a)) / (n_ref / (n_ref + a)) against the entry's attention_seq; 1 when the entry has
// none or the length is not known (query_tokens <= 0).
double attention_sequence_factor(const Hardware& hw, int64_t query_tokens);

// The class a fused kernel of class `k` runs as on `hw`: an FA3-class kernel on a GPU whose entry
// has no FA3 rate (the A100) runs as FA2 (Transformer Engine runs FA2-class kernels there), priced
// at FA2's rate (cost::attention_efficiency) and dropout share; every other class as itself.
AttentionKernel kernel_class_on(const Hardware& hw, AttentionKernel k);

// The time a FlashAttention-1 kernel adds when it applies dropout to the attention probabilities
// (a random number drawn per score element in the forward, drawn again in the backward), as a
// share of its time without dropout at head dimension 64: the FlashAttention paper's benchmark
// (Dao et al. 2022, arXiv 2205.14135, Appendix E.6: A100 40GB, fp16, batch 16, 8 heads of 64,
// dropout 0.1; the mean of the with/without-dropout ratios with a padding mask, Tables 9/12 and
// 10/13, and without, Tables 15/18 and 16/19) at `query_tokens` per sequence, linear in log2 of
// the length between its 1,024 and 65,536 tokens and the end values outside. The random numbers
// are per score element and the kernel's GEMMs do head_dim multiply-adds per element, so at head
// dimension d the share is this x 64 / d (docs/ACCURACY.md item 36).
double attention_dropout_overhead(int64_t query_tokens, bool backward);

// The share a FlashAttention-2 class kernel's time grows by with attention dropout at head
// dimension 128, forward and backward together: Transformer Engine pull request 3313 (a TE
// maintainer, 2026-08-05; GB200, flash-attn 2.7.4, bf16, packed layout), reproducing TE issue
// 3312's workload (4,096 tokens in 4 sequences, 16 heads of 128): 0.695 ms at dropout 0.0, 0.728
// ms at 0.1.
inline constexpr double kFlash2DropoutShareAt128 = 0.728 / 0.695 - 1;
// The same for cuDNN's fused attention on Hopper, which the FlashAttention-3 class stands for
// (FlashAttention-3 itself has no dropout): TE issue 3312's table (2026-08-04; H200, TE 2.15, fused
// backend forced, sbhd layout, the same workload): 0.594 ms at dropout 0.0, 0.614 ms at 0.1.
inline constexpr double kFusedDropoutShareAt128 = 0.614 / 0.594 - 1;

// The share by which a fused attention op that applies dropout (op.dropout) grows, for a kernel of
// class `kernel` computing at head dimension op.k over op.m query tokens a sequence:
// FlashAttention-1 by attention_dropout_overhead x 64 / d, the FlashAttention-2 and -3 classes by
// their measured share above x 128 / d at every length (docs/ACCURACY.md items 36 and 37). 0
// without dropout or a head dimension, and for a class that is not a fused kernel.
double attention_dropout_share(AttentionKernel kernel, const model::OpCost& op);

class ComputeModel {
 public:
  // `calibration` may be null; when given, phases it fitted use its rate instead of the ops model.
  // `attention`: the class of the fused attention kernel, whose dropout share attention ops that
  // apply dropout are charged (attention_dropout_share), as it runs on `hw` (kernel_class_on).
  ComputeModel(const Hardware& hw, Precision precision, const Calibration* calibration = nullptr,
               AttentionKernel attention = AttentionKernel::kFlash2);

  double efficiency(const model::OpCost& op) const;  // fraction of peak for compute-bound ops
  double op_seconds(const model::OpCost& op) const;
  // Sum over ops, or, for a calibrated phase, overhead + total FLOPs / fitted rate.
  double phase_seconds(const std::vector<model::OpCost>& ops, traces::Phase phase) const;
  // A fused backward (B): phase_seconds of its ops together, or, where the calibration fitted I
  // and W but no B (a zero-bubble run's profile), each half at its own fitted rate.
  double backward_seconds(const std::vector<model::OpCost>& input_grad,
                          const std::vector<model::OpCost>& weight_grad) const;
  // A memory-bound pass over `bytes` (optimizer update, copies).
  double stream_seconds(double bytes) const;

  const Hardware& hardware() const { return hw_; }
  Precision precision() const { return precision_; }
  bool calibrated() const { return calibrated_; }
  double peak_flops() const { return peak_; }

 private:
  Hardware hw_;
  Precision precision_;
  double peak_;
  AttentionKernel attention_kernel_;
  Calibration calibration_;
  bool calibrated_ = false;
};

}  // namespace meshscope::cost
