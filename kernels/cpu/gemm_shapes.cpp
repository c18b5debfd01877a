// The files of meshscope-kernel-check --gemm-rates (gemm_shapes.h).
#include "kernels/cpu/gemm_shapes.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "kernels/cpu/csv_lines.h"

namespace meshscope::kernels {

std::vector<GemmShape> read_gemm_shapes(const std::string& path) {
  // A regular file of bounded size, as cost::read_gemm_table wants (no /dev/zero read forever).
  std::vector<GemmShape> shapes;
  for (CsvLine& l : read_csv_lines(path, {.header = "b,m,n,k",
                                         .max_mib = 16,
                                         .what = "a file of GEMM shapes",
                                         .header_wanted = {},
                                         .quote = {}})) {
    std::replace(l.text.begin(), l.text.end(), ',', ' ');
    std::istringstream s(l.text);
    GemmShape g;
    s >> g.b >> g.m >> g.n >> g.k;
    if (s.fail() || g.b < 1 || g.m < 1 || g.n < 1 || g.k < 1)
      throw std::runtime_error(path + ":" + std::to_string(l.number) +
                               ": want sizes b,m,n,k of 1 or more");
    shapes.push_back(g);
  }
  if (shapes.empty()) throw std::runtime_error(path + ": no shapes");
  return shapes;
}

std::string format_gemm_rates(const std::vector<GemmRate>& rates) {
  std::string out = "b,m,n,k,flops_per_s,seconds\n";
  char line[160];
  for (const GemmRate& r : rates) {
    std::snprintf(line, sizeof line, "%lld,%lld,%lld,%lld,%.6e,%.6e\n",
                  static_cast<long long>(r.shape.b), static_cast<long long>(r.shape.m),
                  static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k),
                  r.flops_per_s, r.seconds);
    out += line;
  }
  return out;
}

}  // namespace meshscope::kernels
