// End-to-end cost of `meshscope predict` (docs/BENCHMARKS.md): GPT-175B on 16,384 GPUs (dp 128 x
// pp 16 x tp 8, 64 microbatches, 1F1B) with every rank simulated versus identical replicas
// simulated once; the default (replicas once) as dp grows to a million GPUs; and `--search` over
// 512 to 1,536 GPUs for the README's Korthikanti 175B and Llama 3 405B configs.
#include <benchmark/benchmark.h>

#include "sim/predict/search.h"
#include "sim/predict/simulate.h"

namespace {

using namespace meshscope;

predict::PredictConfig gpt_175b(int dp, predict::Symmetry symmetry) {
  predict::PredictConfig c;
  c.gpt.layers = 96;
  c.gpt.hidden = 12288;
  c.gpt.heads = 96;
  c.gpt.seq = 2048;
  c.gpt.vocab = 51200;
  c.mesh = {dp, 16, 8};
  c.global_batch = int64_t{dp} * 64;
  c.micro_batch = 1;
  c.gpu = "h100-sxm";
  c.sequence_parallel = true;
  c.recompute = model::Recompute::kSelective;
  c.symmetry = symmetry;
  return c;
}

void BM_Predict16k(benchmark::State& state) {
  const auto symmetry = state.range(0) ? predict::Symmetry::kOn : predict::Symmetry::kOff;
  const predict::PredictConfig c = gpt_175b(128, symmetry);
  int64_t actions = 0;
  for (auto _ : state) {
    const predict::Simulation s = predict::simulate(c, {.build_timeline = false});
    actions = s.summary.simulated_actions;
    benchmark::DoNotOptimize(s.summary.step_time_s);
  }
  state.counters["simulated_actions"] = static_cast<double>(actions);
}
BENCHMARK(BM_Predict16k)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("replicas_once")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// `predict`'s default (symmetry auto) as dp grows: 16,384, 262,144 and 1,048,576 GPUs.
void BM_PredictDefaultGpus(benchmark::State& state) {
  const predict::PredictConfig c =
      gpt_175b(static_cast<int>(state.range(0)) / 128, predict::Symmetry::kAuto);
  int64_t actions = 0;
  bool once = false;
  for (auto _ : state) {
    const predict::Simulation s = predict::simulate(c, {.build_timeline = false});
    actions = s.summary.simulated_actions;
    once = s.summary.replicas_simulated_once;
    benchmark::DoNotOptimize(s.summary.step_time_s);
  }
  state.counters["simulated_actions"] = static_cast<double>(actions);
  state.counters["replicas_once"] = once;
}
BENCHMARK(BM_PredictDefaultGpus)
    ->Arg(16384)
    ->Arg(262144)
    ->Arg(1048576)
    ->ArgName("gpus")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// `predict --search --gpus N` on the README's configs: sim/predict/configs/korthikanti-175b.json
// (A100, global batch 64) and sim/predict/configs/llama3-405b.json (H100, global batch 2048: up to
// 2,048 microbatches per replica, the expensive one), written out here as parse_config reads them.
predict::PredictConfig korthikanti_175b() {
  predict::PredictConfig c = gpt_175b(1, predict::Symmetry::kAuto);
  c.mesh = {1, 8, 8};
  c.global_batch = 64;
  c.gpu = "a100-80gb";
  c.gpus_per_node = 8;
  c.flash_attention = false;
  return c;
}

predict::PredictConfig llama3_405b() {
  predict::PredictConfig c;
  c.gpt.layers = 126;
  c.gpt.hidden = 16384;
  c.gpt.heads = 128;
  c.gpt.kv_heads = 8;
  c.gpt.ffn = 53248;
  c.gpt.gated_mlp = true;
  c.gpt.seq = 8192;
  c.gpt.vocab = 128256;
  c.gpt.tied_embeddings = false;
  c.gpt.learned_positions = false;
  c.mesh = {64, 16, 8};
  c.global_batch = 2048;
  c.gpu = "h100-sxm";
  c.gpus_per_node = 8;
  c.sequence_parallel = true;
  c.zero = 1;
  return c;
}

void run_search(benchmark::State& state, const predict::PredictConfig& c) {
  predict::SearchOptions so;
  so.gpus = state.range(0);
  size_t found = 0;
  for (auto _ : state) {
    const auto fits = predict::search(c, so);
    found = fits.size();
    benchmark::DoNotOptimize(fits.data());
  }
  state.counters["fit"] = static_cast<double>(found);
}

void BM_SearchKorthikanti175b(benchmark::State& state) { run_search(state, korthikanti_175b()); }
BENCHMARK(BM_SearchKorthikanti175b)
    ->Arg(512)
    ->Arg(1536)
    ->ArgName("gpus")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchLlama3_405b(benchmark::State& state) { run_search(state, llama3_405b()); }
BENCHMARK(BM_SearchLlama3_405b)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(1536)
    ->ArgName("gpus")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
