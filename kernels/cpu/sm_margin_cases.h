// The files of meshscope-kernel-check --sm-margin (kernels/cuda/sm_margin.h, which measures on a
// GPU what Transformer Engine's SM margin costs): the cases it reads and the times it writes. Host
// code, apart from the measuring, so that it is tested on machines without CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshscope::kernels {

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

// Cases from a CSV whose header starts "name,m,n,k,num_sm,num_splits"; '#' lines are comments,
// each line as many fields as the header (kernels/cpu/csv_lines.h). Throws std::runtime_error
// naming the file and line.
std::vector<SmMarginCase> read_sm_margin_cases(const std::string& path);

// "name,m,n,k,num_sm,num_splits,sms,whole_s,whole_target_s,split_s,split_target_s,held_s,
// held_target_s" and a line per case.
std::string format_sm_margin(const std::vector<SmMarginTimes>& times);

}  // namespace meshscope::kernels
