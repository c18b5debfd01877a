// The files of meshscope-kernel-check --gemm-rates (kernels/cuda/gemm_rates.h, which measures the
// rates on a GPU): the shapes it reads and the rates it writes, which `meshscope calibrate
// --gemm-rates` reads back. Host code, apart from the measuring, so that it is tested on machines
// without CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshscope::kernels {

struct GemmShape {
  int64_t b = 1, m = 0, n = 0, k = 0;
};

struct GemmRate {
  GemmShape shape;
  double seconds = 0;      // per call: the median over 5 batches of `iters` calls of their mean
  double flops_per_s = 0;  // 2 b m n k / seconds
};

// The shapes of a CSV with a `b,m,n,k` header prefix (as tests/fixtures/xla/*.csv): '#' lines are
// comments, columns after k ignored, each line as many fields as the header (kernels/cpu/
// csv_lines.h). Throws std::runtime_error naming the file and line. (The rates of such a file are
// read by cost::read_gemm_table; kernels/cuda may not use sim/cost, so the shape columns are read
// here again.)
std::vector<GemmShape> read_gemm_shapes(const std::string& path);

// "b,m,n,k,flops_per_s,seconds" and a line per rate (what calibrate --gemm-rates reads).
std::string format_gemm_rates(const std::vector<GemmRate>& rates);

}  // namespace meshscope::kernels
