// Throughput of the cpu kernels the executor spends its time in: the blocked GEMM on the shapes of
// an MLP block (forward, input gradient, weight gradient) against the naive triple loop.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/ops.h"

namespace {

using meshscope::kernels::cpu::gemm;

std::vector<float> random_matrix(size_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Args: m, n, k, trans_a, trans_b.
void BM_Gemm(benchmark::State& state) {
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const bool ta = state.range(3) != 0, tb = state.range(4) != 0;
  auto a = random_matrix(size_t(m) * k), b = random_matrix(size_t(k) * n),
       c = random_matrix(size_t(m) * n);
  for (auto _ : state) {
    gemm(ta, tb, m, n, k, 1.0f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
}
// h = 256, 32 rows: fc1 forward, fc1 input gradient (B^T), fc1 weight gradient (A^T).
BENCHMARK(BM_Gemm)
    ->Args({32, 1024, 256, 0, 0})
    ->Args({32, 256, 1024, 0, 1})
    ->Args({256, 1024, 32, 1, 0})
    ->Args({512, 512, 512, 0, 0});

void BM_GemmNaive(benchmark::State& state) {
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  auto a = random_matrix(size_t(m) * k), b = random_matrix(size_t(k) * n),
       c = random_matrix(size_t(m) * n);
  for (auto _ : state) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float s = 0;
        for (int p = 0; p < k; ++p) s += a[size_t(i) * k + p] * b[size_t(p) * n + j];
        c[size_t(i) * n + j] = s;
      }
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * k * state.iterations(), benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
}
BENCHMARK(BM_GemmNaive)->Args({512, 512, 512});

}  // namespace

BENCHMARK_MAIN();
