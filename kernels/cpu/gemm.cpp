// Blocked, packed float32 GEMM (GotoBLAS layout: panels of A and B packed into contiguous
// micro-panels, a 4 x 8 register tile that the compiler vectorises). No external BLAS.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/ops.h"

namespace meshscope::kernels::cpu {
namespace {

constexpr int kMr = 4;    // rows of the register tile
constexpr int kNr = 8;    // columns of the register tile (two SSE or one AVX register)
constexpr int kKc = 256;  // depth of a packed panel: a kc x kNr panel of B stays in L1
constexpr int kMc = 96;   // rows of a packed block of A: mc x kc stays in L2
constexpr int kNc = 1024;

// Product size below which packing costs more than it saves.
constexpr long kSmallWork = 16 * 16 * 16;

struct Operand {
  const float* p;
  int ld;
  bool trans;
  float at(int r, int c) const {
    return trans ? p[static_cast<long>(c) * ld + r] : p[static_cast<long>(r) * ld + c];
  }
};

// Packs op(A)[i0 .. i0+mc) x [p0 .. p0+kc) into micro-panels of kMr rows, zero-padded.
void pack_a(const Operand& a, int i0, int p0, int mc, int kc, float* out) {
  for (int ib = 0; ib < mc; ib += kMr) {
    const int rows = std::min(kMr, mc - ib);
    for (int p = 0; p < kc; ++p) {
      for (int r = 0; r < kMr; ++r) *out++ = r < rows ? a.at(i0 + ib + r, p0 + p) : 0.0f;
    }
  }
}

// Packs op(B)[p0 .. p0+kc) x [j0 .. j0+nc) into micro-panels of kNr columns, zero-padded.
void pack_b(const Operand& b, int p0, int j0, int kc, int nc, float* out) {
  for (int jb = 0; jb < nc; jb += kNr) {
    const int cols = std::min(kNr, nc - jb);
    for (int p = 0; p < kc; ++p) {
      if (!b.trans && cols == kNr) {
        const float* src = b.p + static_cast<long>(p0 + p) * b.ld + j0 + jb;
        for (int c = 0; c < kNr; ++c) out[c] = src[c];
        out += kNr;
      } else {
        for (int c = 0; c < kNr; ++c) *out++ = c < cols ? b.at(p0 + p, j0 + jb + c) : 0.0f;
      }
    }
  }
}

// acc = sum_p a_panel[p][r] * b_panel[p][c] over kc.
inline void micro_kernel(int kc, const float* __restrict ap, const float* __restrict bp,
                         float (&acc)[kMr][kNr]) {
  float t[kMr][kNr] = {};
  for (int p = 0; p < kc; ++p) {
    const float* b = bp + p * kNr;
    const float* a = ap + p * kMr;
    for (int r = 0; r < kMr; ++r) {
      for (int c = 0; c < kNr; ++c) t[r][c] += a[r] * b[c];
    }
  }
  for (int r = 0; r < kMr; ++r) {
    for (int c = 0; c < kNr; ++c) acc[r][c] = t[r][c];
  }
}

void scale_c(int m, int n, float beta, float* c, int ldc) {
  if (beta == 1.0f) return;
  for (int i = 0; i < m; ++i) {
    float* row = c + static_cast<long>(i) * ldc;
    if (beta == 0.0f) {
      std::fill(row, row + n, 0.0f);
    } else {
      for (int j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

void gemm_small(const Operand& a, const Operand& b, int m, int n, int k, float alpha, float* c,
                int ldc) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int p = 0; p < k; ++p) s += a.at(i, p) * b.at(p, j);
      c[static_cast<long>(i) * ldc + j] += alpha * s;
    }
  }
}

void gemm_blocked(const Operand& a, const Operand& b, int m, int n, int k, float alpha, float* c,
                  int ldc) {
  // Per-thread scratch, grown once: every rank thread reuses its own, so steady state allocates
  // nothing.
  thread_local std::vector<float> a_pack;
  thread_local std::vector<float> b_pack;
  a_pack.resize(static_cast<size_t>(kMc + kMr) * kKc);
  b_pack.resize(static_cast<size_t>(kNc + kNr) * kKc);
  float acc[kMr][kNr];
  for (int j0 = 0; j0 < n; j0 += kNc) {
    const int nc = std::min(kNc, n - j0);
    for (int p0 = 0; p0 < k; p0 += kKc) {
      const int kc = std::min(kKc, k - p0);
      pack_b(b, p0, j0, kc, nc, b_pack.data());
      for (int i0 = 0; i0 < m; i0 += kMc) {
        const int mc = std::min(kMc, m - i0);
        pack_a(a, i0, p0, mc, kc, a_pack.data());
        for (int jb = 0; jb < nc; jb += kNr) {
          const int cols = std::min(kNr, nc - jb);
          const float* bp = b_pack.data() + static_cast<long>(jb) * kc;
          for (int ib = 0; ib < mc; ib += kMr) {
            const int rows = std::min(kMr, mc - ib);
            micro_kernel(kc, a_pack.data() + static_cast<long>(ib) * kc, bp, acc);
            for (int r = 0; r < rows; ++r) {
              float* crow = c + static_cast<long>(i0 + ib + r) * ldc + j0 + jb;
              for (int cc = 0; cc < cols; ++cc) crow[cc] += alpha * acc[r][cc];
            }
          }
        }
      }
    }
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  if (m < 0 || n < 0 || k < 0) {
    throw std::invalid_argument("gemm: negative size m=" + std::to_string(m) +
                                " n=" + std::to_string(n) + " k=" + std::to_string(k));
  }
  if (ldc < n || lda < (trans_a ? m : k) || ldb < (trans_b ? k : n)) {
    throw std::invalid_argument("gemm: leading dimension smaller than the row length");
  }
  if (m == 0 || n == 0) return;
  scale_c(m, n, beta, c, ldc);
  if (k == 0 || alpha == 0.0f) return;
  const Operand oa{a, lda, trans_a};
  const Operand ob{b, ldb, trans_b};
  if (static_cast<long>(m) * n * k < kSmallWork) {
    gemm_small(oa, ob, m, n, k, alpha, c, ldc);
  } else {
    gemm_blocked(oa, ob, m, n, k, alpha, c, ldc);
  }
}

}  // namespace meshscope::kernels::cpu
