// GEMM checks: every transpose combination, padded row strides, beta 0 over a NaN-poisoned C and
// beta != 0 over a live C, in fp32, tf32 and bf16.
#include <limits>
#include <string>

#include "kernels/cuda/check_internal.h"

namespace meshscope::kernels::cuda::detail {
namespace {

double tolerance_for(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kTf32:
      return kTf32Tolerance;
    case GemmPrecision::kBf16:
      return kBf16Tolerance;
    default:
      return kFp32Tolerance;
  }
}

struct GemmCase {
  int m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
};

// The m x n block of a row-major matrix with row stride ld.
std::vector<float> block(const std::vector<float>& x, int rows, int cols, int ld) {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) out.push_back(x[static_cast<size_t>(r) * ld + c]);
  }
  return out;
}

void check_gemm(Checker& c, GemmPrecision precision, const GemmCase& g) {
  const int a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const int b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  const int lda = a_cols + 3, ldb = b_cols + 1, ldc = g.n + 2;  // padded strides
  const auto a = c.random(static_cast<size_t>(a_rows) * lda);
  const auto b = c.random(static_cast<size_t>(b_rows) * ldb);
  const size_t c_elems = static_cast<size_t>(g.m) * ldc;
  std::vector<float> ref = g.beta == 0 ? std::vector<float>(c_elems, 0.f) : c.random(c_elems);
  auto da = c.upload(a);
  auto db = c.upload(b);
  auto dc = g.beta == 0 ? c.poisoned(c_elems) : c.upload(ref);
  if (g.beta == 0) {
    std::vector<float> nan_c(c_elems, std::numeric_limits<float>::quiet_NaN());
    ref.swap(nan_c);  // the CPU reference must overwrite NaNs too
  }
  c.ctx().set_precision(precision);
  gemm(c.ctx(), g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, da.data(), lda, db.data(), ldb,
       g.beta, dc.data(), ldc);
  cpu::gemm(g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, a.data(), lda, b.data(), ldb, g.beta,
            ref.data(), ldc);
  const auto out = c.download(dc);
  c.ctx().set_precision(GemmPrecision::kFp32);
  const std::string variant = std::string(name(precision)) + " " + (g.trans_a ? "T" : "N") +
                              (g.trans_b ? "T" : "N") + " " + std::to_string(g.m) + "x" +
                              std::to_string(g.n) + "x" + std::to_string(g.k) +
                              " beta=" + (g.beta == 0 ? "0" : "0.5");
  c.expect_close("gemm", variant, block(out, g.m, g.n, ldc), block(ref, g.m, g.n, ldc),
                 tolerance_for(precision));
}

}  // namespace

void check_gemms(Checker& c) {
  for (int p = 0; p < static_cast<int>(GemmPrecision::kCount); ++p) {
    const auto precision = static_cast<GemmPrecision>(p);
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      check_gemm(c, precision, {67, 45, 129, ta, tb, 1.f, 0.f});
      check_gemm(c, precision, {67, 45, 129, ta, tb, 0.75f, 0.5f});
    }
    check_gemm(c, precision, {256, 384, 512, false, true, 1.f, 0.f});  // a layer's weight grad
  }
}

}  // namespace meshscope::kernels::cuda::detail
