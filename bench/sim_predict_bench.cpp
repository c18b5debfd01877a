// End-to-end cost of `meshscope predict` on a 16,384-GPU GPT-175B-like mesh (dp 128 x pp 16 x
// tp 8, 64 microbatches, 1F1B): workload costs, schedule generation, engine; every rank simulated
// versus identical replicas simulated once (docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include "sim/predict/simulate.h"

namespace {

using namespace meshscope;

predict::PredictConfig gpt_16k(predict::Symmetry symmetry) {
  predict::PredictConfig c;
  c.gpt.layers = 96;
  c.gpt.hidden = 12288;
  c.gpt.heads = 96;
  c.gpt.seq = 2048;
  c.gpt.vocab = 51200;
  c.mesh = {128, 16, 8};
  c.global_batch = 128 * 64;
  c.micro_batch = 1;
  c.gpu = "h100-sxm";
  c.sequence_parallel = true;
  c.recompute = model::Recompute::kSelective;
  c.symmetry = symmetry;
  return c;
}

void BM_Predict16k(benchmark::State& state) {
  const auto symmetry = state.range(0) ? predict::Symmetry::kOn : predict::Symmetry::kOff;
  const predict::PredictConfig c = gpt_16k(symmetry);
  int64_t actions = 0;
  for (auto _ : state) {
    const predict::Simulation s = predict::simulate(c, {.build_timeline = false});
    actions = s.summary.simulated_actions;
    benchmark::DoNotOptimize(s.summary.step_time_s);
  }
  state.counters["simulated_actions"] = static_cast<double>(actions);
}
BENCHMARK(BM_Predict16k)->Arg(0)->Arg(1)->ArgName("replicas_once")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
