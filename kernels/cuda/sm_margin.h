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

#include "kernels/cpu/sm_margin_cases.h"

namespace meshscope::kernels::cuda {

// The cases measured, their times, and the files of both: host code
// (kernels/cpu/sm_margin_cases.h).
using kernels::format_sm_margin;
using kernels::read_sm_margin_cases;
using kernels::SmMarginCase;
using kernels::SmMarginTimes;

// Throws std::runtime_error (CUDA or cuBLASLt failure, a case the device cannot run: n not
// divisible by num_splits, num_sm not 1 to the device's SMs less 2, operands over 8 GiB; holders
// that did not all run, were not released or shared an SM).
std::vector<SmMarginTimes> measure_sm_margin(const std::vector<SmMarginCase>& cases, int iters = 20,
                                             uint64_t seed = 1);

}  // namespace meshscope::kernels::cuda
