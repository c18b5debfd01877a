// The GEMM rate of the project's CPU kernels (kernels/cpu), behind the cpu-local catalog entry's
// efficiency (sim/cost/catalog/cpu-local.json, docs/BENCHMARKS.md): square products and the
// executor's MLP shapes (rows of a microbatch x h x 4h).
#include <benchmark/benchmark.h>

#include <vector>

#include "kernels/cpu/ops.h"

namespace {

void BM_CpuGemm(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  const int n = static_cast<int>(state.range(1));
  const int k = static_cast<int>(state.range(2));
  std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 0.25f),
      c(static_cast<size_t>(m) * n);
  for (auto _ : state) {
    meshscope::kernels::cpu::gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                                  c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["flops"] =
      benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CpuGemm)
    ->Args({256, 256, 256})
    ->Args({512, 512, 512})
    ->Args({1024, 1024, 1024})
    ->Args({8, 2048, 512})
    ->Args({8, 512, 2048})
    ->Args({16, 2048, 512})
    ->Args({64, 2048, 512})
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
