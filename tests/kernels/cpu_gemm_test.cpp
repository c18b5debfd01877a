// kernels::cpu::gemm against a naive double-precision product, over shapes that cross every
// blocking edge, both transposes, strided leading dimensions and the alpha/beta cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/cpu/ops.h"

namespace meshscope::kernels::cpu {
namespace {

struct Case {
  int m, n, k;
  bool ta, tb;
  float alpha, beta;
  int pad;  // extra elements per row on every leading dimension
};

std::vector<float> random_vector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void check(const Case& cs) {
  std::mt19937 rng(cs.m * 7919 + cs.n * 31 + cs.k);
  const int a_rows = cs.ta ? cs.k : cs.m, a_cols = cs.ta ? cs.m : cs.k;
  const int b_rows = cs.tb ? cs.n : cs.k, b_cols = cs.tb ? cs.k : cs.n;
  const int lda = a_cols + cs.pad, ldb = b_cols + cs.pad, ldc = cs.n + cs.pad;
  auto a = random_vector(static_cast<size_t>(a_rows) * lda, rng);
  auto b = random_vector(static_cast<size_t>(b_rows) * ldb, rng);
  auto c = random_vector(static_cast<size_t>(cs.m) * ldc, rng);
  if (cs.beta == 0.0f) {
    for (float& x : c) x = std::numeric_limits<float>::quiet_NaN();  // must not propagate
  }
  const auto c0 = c;
  gemm(cs.ta, cs.tb, cs.m, cs.n, cs.k, cs.alpha, a.data(), lda, b.data(), ldb, cs.beta, c.data(),
       ldc);
  for (int i = 0; i < cs.m; ++i) {
    for (int j = 0; j < cs.n; ++j) {
      double s = 0, mag = 0;
      for (int p = 0; p < cs.k; ++p) {
        const double x =
            cs.ta ? a[static_cast<size_t>(p) * lda + i] : a[static_cast<size_t>(i) * lda + p];
        const double y =
            cs.tb ? b[static_cast<size_t>(j) * ldb + p] : b[static_cast<size_t>(p) * ldb + j];
        s += x * y;
        mag += std::abs(x * y);
      }
      const double prev = cs.beta == 0.0f
                              ? 0.0
                              : cs.beta * static_cast<double>(c0[static_cast<size_t>(i) * ldc + j]);
      const double want = cs.alpha * s + prev;
      const double got = c[static_cast<size_t>(i) * ldc + j];
      const double tol = 1e-6 * (std::abs(cs.alpha) * mag + std::abs(prev)) + 1e-6;
      ASSERT_NEAR(got, want, tol) << "m=" << cs.m << " n=" << cs.n << " k=" << cs.k
                                  << " ta=" << cs.ta << " tb=" << cs.tb << " at (" << i << "," << j
                                  << ")";
    }
    // The padding between rows is not C's: it must be left alone.
    for (int j = cs.n; j < ldc; ++j) {
      const size_t idx = static_cast<size_t>(i) * ldc + j;
      if (std::isnan(c0[idx])) {
        EXPECT_TRUE(std::isnan(c[idx]));
      } else {
        EXPECT_EQ(c[idx], c0[idx]);
      }
    }
  }
}

TEST(CpuGemm, MatchesDoubleReferenceOverShapesAndTransposes) {
  const std::vector<std::tuple<int, int, int>> shapes = {
      {1, 1, 1},    {3, 2, 1},      {1, 3, 2},      {5, 7, 3},     {17, 9, 33},
      {64, 64, 64}, {97, 130, 300}, {200, 33, 513}, {4, 1025, 17}, {129, 8, 260}};
  for (auto [m, n, k] : shapes) {
    for (int t = 0; t < 4; ++t) {
      check({m, n, k, (t & 1) != 0, (t & 2) != 0, 1.0f, 0.0f, 0});
    }
  }
}

TEST(CpuGemm, AlphaBetaAndLeadingDimensions) {
  check({37, 45, 70, false, true, 0.5f, 1.0f, 3});
  check({37, 45, 70, true, false, -2.0f, 0.25f, 5});
  check({120, 100, 300, true, true, 1.0f, 1.0f, 1});
  check({6, 6, 6, false, false, 1.5f, -1.0f, 2});
}

TEST(CpuGemm, ZeroDepthScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  gemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
}

TEST(CpuGemm, RejectsBadSizes) {
  std::vector<float> x(16);
  EXPECT_THROW(gemm(false, false, -1, 2, 2, 1, x.data(), 2, x.data(), 2, 0, x.data(), 2),
               std::invalid_argument);
  EXPECT_THROW(gemm(false, false, 2, 4, 2, 1, x.data(), 2, x.data(), 4, 0, x.data(), 3),
               std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::kernels::cpu
