// How much Transformer Engine's SM margin slows a GEMM (meshscope-kernel-check --sm-margin, run by
// scripts/gpu-check.sh). docs/ACCURACY.md leaves NeMo's `set_sm_margin` unpriced because no
// stored source measures it: TE then asks cuBLASLt for each chunk of a pipelined reduce-scatter
// GEMM with an SM count target of the GPU's SMs less the communication's `num_sm`
// (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, which cuBLAS documents as a hint to its heuristics), and
// issues the chunks round-robin on up to three compute streams (TE's `_NUM_MAX_UB_STREAMS`), so a
// chunk may fill the SMs its neighbour leaves. This measures what that pattern costs, the way TE
// runs it (CommOverlapBase::split_overlap_rs in transformer_engine/common/comm_gemm_overlap/
// comm_gemm_overlap.cpp: the weight cut into `num_splits` chunks of output features, each chunk a
// TN cublasLtMatmul of bf16 with fp32 accumulation on stream i % streams, the streams forked from
// and joined to the caller's), with a kernel holding `num_sm` SMs in place of the reduce-scatter
// (in pairs of one GPC, as TE launches its communication kernels in clusters of 2; each holder's
// SM is checked to be its own). That kernel holds its SMs for the whole GEMM and moves no data: in
// TE the first chunk runs with no reduce-scatter beside it, the last chunk's takes 32 SMs, and the
// real kernels also use memory and NVLink bandwidth, so the held ways bound, not reproduce, it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshscope::kernels::cuda {

// One GEMM TE runs with a pipelined reduce-scatter (a row-parallel linear's forward: proj_fprop,
// fc2_fprop): [m tokens, k] x [k, n] -> [m, n], its reduce-scatter's SMs and chunks (ub_cfg).
struct SmMarginCase {
  std::string name;  // e.g. "nemo-gpt3-175b.proj_fprop"
  int64_t m = 0, n = 0, k = 0;
  int num_sm = 0;      // SMs the reduce-scatter kernels hold (ub_cfg num_sm)
  int num_splits = 0;  // chunks of the output features (ub_cfg num_splits)
};

// Seconds per call of each way of running one case (median over 5 batches of back-to-back calls).
struct SmMarginTimes {
  SmMarginCase c;
  int sms = 0;              // the device's SMs; the margin's target is sms - num_sm
  double whole = 0;         // the GEMM in one call on all SMs: what the model prices
  double whole_target = 0;  // one call with the SM count target: is the target a cap?
  double split = 0;         // TE's chunks on its streams, no target
  double split_target = 0;  // TE's chunks with the target: set_sm_margin, nothing else running
  double held = 0;          // chunks, no target, while a kernel holds num_sm SMs throughout
  double held_target = 0;   // the same with the target
};

// Throws std::runtime_error (CUDA or cuBLASLt failure, a case the device cannot run: n not
// divisible by num_splits, num_sm not 1 to the device's SMs less 2, operands over 8 GiB; holders
// that did not all run, were not released or shared an SM).
std::vector<SmMarginTimes> measure_sm_margin(const std::vector<SmMarginCase>& cases, int iters = 20,
                                             uint64_t seed = 1);

// Cases from a CSV whose header starts "name,m,n,k,num_sm,num_splits"; '#' lines are comments.
// Throws std::runtime_error naming the file and line.
std::vector<SmMarginCase> read_sm_margin_cases(const std::string& path);

// "name,m,n,k,num_sm,num_splits,sms,whole_s,whole_target_s,split_s,split_target_s,held_s,
// held_target_s" and a line per case.
std::string format_sm_margin(const std::vector<SmMarginTimes>& times);

}  // namespace meshscope::kernels::cuda
