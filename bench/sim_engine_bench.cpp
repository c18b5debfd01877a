// How fast the simulator runs big meshes: schedule generation, the engine with and without a
// Timeline, and how the cost grows with GPU count and microbatches (docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include "sim/engine/engine.h"
#include "sim/engine/program.h"
#include "sim/schedule/generators.h"

namespace {

using namespace meshscope;

schedule::Schedule one_f_one_b(int dp, int pp, int tp, int m) {
  schedule::GeneratorConfig c;
  c.family = schedule::Family::kOneFOneB;
  c.mesh = {.dp = dp, .pp = pp, .tp = tp};
  c.microbatches = m;
  c.activation_bytes = {16 << 20};
  c.gradient_bytes = {1 << 30};
  return schedule::generate(c);
}

// Costs of a GPT-175B-like stage on an H100 node: what matters here is that they are realistic
// magnitudes, not their exact values.
engine::EngineInput input_for(const schedule::Schedule& s, bool timeline) {
  engine::EngineInput in;
  in.schedule = &s;
  in.stages.assign(s.num_stages, engine::StageTiming{});
  for (engine::StageTiming& t : in.stages) {
    t.forward_ns = 10'000'000;
    t.input_grad_ns = 10'000'000;
    t.weight_grad_ns = 10'000'000;
    t.backward_ns = 20'000'000;
    t.optimizer_ns = 2'000'000;
    t.activation_bytes = 1 << 30;
  }
  const int per_node = 8;
  in.tier_of = [per_node](int a, int b) { return a / per_node == b / per_node ? 0 : 1; };
  in.links = {engine::LinkSpec{450e9, 3400}, engine::LinkSpec{50e9, 9600}};
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{50'000'000}; };
  in.build_timeline = timeline;
  return in;
}

void BM_Generate(benchmark::State& state) {
  const int dp = static_cast<int>(state.range(0));
  for (auto _ : state) {
    auto s = one_f_one_b(dp, 16, 8, 64);
    benchmark::DoNotOptimize(s.ranks.data());
  }
  state.counters["gpus"] = dp * 16 * 8;
}
BENCHMARK(BM_Generate)->Arg(128)->Unit(benchmark::kMillisecond)->UseRealTime();

void run_engine(benchmark::State& state, int dp, int pp, int tp, int m, bool timeline) {
  const auto s = one_f_one_b(dp, pp, tp, m);
  int64_t actions = 0;
  for (auto _ : state) {
    auto r = engine::simulate(input_for(s, timeline));
    actions = r.actions;
    benchmark::DoNotOptimize(r.step_time_ns);
  }
  state.counters["gpus"] = dp * pp * tp;
  state.counters["actions"] = static_cast<double>(actions);
  state.counters["actions_per_s"] = benchmark::Counter(
      static_cast<double>(actions), benchmark::Counter::kIsIterationInvariantRate);
}

// 16,384 GPUs: dp 128 x pp 16 x tp 8, 64 microbatches, 1F1B (the target: < 2 s).
void BM_Engine16k(benchmark::State& state) {
  run_engine(state, 128, 16, 8, 64, state.range(0) != 0);
}
BENCHMARK(BM_Engine16k)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("timeline")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The first part of BM_Engine16k alone: compiling the schedule into the event loop's program.
void BM_Compile16k(benchmark::State& state) {
  const auto s = one_f_one_b(128, 16, 8, 64);
  const engine::EngineInput in = input_for(s, false);
  for (auto _ : state) {
    const engine::Program p = engine::compile(in);
    benchmark::DoNotOptimize(p.code.data());
  }
  double actions = 0;
  for (const auto& program : s.ranks) actions += static_cast<double>(program.size());
  state.counters["actions_per_s"] =
      benchmark::Counter(actions, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Compile16k)->Unit(benchmark::kMillisecond)->UseRealTime();

// Growth with GPU count (dp grows, pp 16, tp 8, m 64) and with microbatches (16k GPUs).
void BM_EngineGpus(benchmark::State& state) {
  run_engine(state, static_cast<int>(state.range(0)), 16, 8, 64, false);
}
BENCHMARK(BM_EngineGpus)
    ->RangeMultiplier(4)
    ->Range(2, 128)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_EngineMicrobatches(benchmark::State& state) {
  run_engine(state, 128, 16, 8, static_cast<int>(state.range(0)), false);
}
BENCHMARK(BM_EngineMicrobatches)
    ->RangeMultiplier(2)
    ->Range(16, 128)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
