// Measured against closed-form bubble fractions on the cpu backend, for every schedule family:
// p = 2 pipeline ranks (one core each on a 2-core host), m = 4 microbatches, one MLP block
// (h = 256, 32 rows per microbatch) per stage and data_gradient, so every stage, and F, I and W,
// cost about the same; threads pinned. exec::measure_bubble: 4 runs of 5 steps, the median of the
// fastest quarter of step windows. Run it under SCHED_FIFO (chrt -f 1) on a shared machine.
// Counters: bubble (measured, overall), closed_form, step_ms.
#include <benchmark/benchmark.h>

#include "profiler/exec/bubble_probe.h"
#include "sim/schedule/generators.h"

namespace {

using namespace meshscope;
using schedule::Family;

constexpr int kRanks = 2;
constexpr int kMicrobatches = 4;

// The textbook bubble fraction with equal stage costs: naive (p-1)/p, GPipe and 1F1B
// (p-1)/(m+p-1), interleaved (p-1)/(vm+p-1) (Megatron-LM's interleaved schedule), ZB-H1
// (p-1)/(3m+p-1) with equal F, I and W (Qi et al. 2023); tensor and data parallelism have none.
double closed_form(Family f, int p, int m, int v) {
  switch (f) {
    case Family::kNaive:
      return double(p - 1) / p;
    case Family::kGpipe:
    case Family::kOneFOneB:
      return double(p - 1) / (m + p - 1);
    case Family::kInterleaved:
      return double(p - 1) / (v * m + p - 1);
    case Family::kZbH1:
      return double(p - 1) / (3 * m + p - 1);
    default:
      return 0;
  }
}

void measure(benchmark::State& state, Family family) {
  const bool pipeline = family != Family::kTensorParallel && family != Family::kDataParallel;
  const int v = schedule::info(family).default_virtual_stages;
  schedule::GeneratorConfig g;
  g.family = family;
  g.mesh = family == Family::kTensorParallel ? mesh::MeshShape{1, 1, kRanks}
           : family == Family::kDataParallel ? mesh::MeshShape{kRanks, 1, 1}
                                             : mesh::MeshShape{1, kRanks, 1};
  g.microbatches = kMicrobatches;
  g.virtual_stages = v;
  exec::RunConfig config;
  config.schedule = schedule::generate(g);
  config.workload.kind = model::WorkloadKind::kMlp;
  config.workload.layers = pipeline ? kRanks * v : 1;
  config.workload.hidden = 256;
  config.workload.batch = 32 * kMicrobatches * g.mesh.dp;
  config.workload.lr = 0.001f;
  config.workload.data_gradient = true;
  config.backend = runtime::BackendKind::kCpu;
  config.backend_options.pin_threads = true;
  config.steps = 5;
  exec::BubbleMeasurement m;
  for (auto _ : state) m = exec::measure_bubble(config, 4);
  state.counters["bubble"] = m.bubble_fraction;
  state.counters["closed_form"] = closed_form(family, kRanks, kMicrobatches, v);
  state.counters["step_ms"] = static_cast<double>(m.step_ns) * 1e-6;
}

void BM_Naive(benchmark::State& s) { measure(s, Family::kNaive); }
void BM_Gpipe(benchmark::State& s) { measure(s, Family::kGpipe); }
void BM_OneFOneB(benchmark::State& s) { measure(s, Family::kOneFOneB); }
void BM_Interleaved(benchmark::State& s) { measure(s, Family::kInterleaved); }
void BM_ZbH1(benchmark::State& s) { measure(s, Family::kZbH1); }
void BM_TensorParallel(benchmark::State& s) { measure(s, Family::kTensorParallel); }
void BM_DataParallel(benchmark::State& s) { measure(s, Family::kDataParallel); }
BENCHMARK(BM_Naive)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Gpipe)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_OneFOneB)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Interleaved)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_ZbH1)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_TensorParallel)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_DataParallel)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
