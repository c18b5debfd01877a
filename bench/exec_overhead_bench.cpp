// Executor overhead per action on the cpu backend: schedules over a 1-wide MLP (math ~ tens of ns
// per action), so the step time divided by the actions a rank runs is what the executor, the
// tracer and the transport cost. Times come from the run's own Timeline step windows (setup,
// thread start and result gathering excluded).
#include <benchmark/benchmark.h>

#include "profiler/exec/executor.h"
#include "profiler/runtime/backend.h"
#include "sim/schedule/generators.h"

namespace {

using namespace meshscope;

struct Measured {
  double window_ns = 0;
  double actions = 0;  // actions of the busiest rank, summed over the measured steps
};

Measured run_tiny(schedule::Family family, mesh::MeshShape shape, int microbatches, int steps) {
  schedule::GeneratorConfig g;
  g.family = family;
  g.mesh = shape;
  g.microbatches = microbatches;
  exec::RunConfig c;
  c.schedule = schedule::generate(g);
  c.workload.kind = model::WorkloadKind::kMlp;
  c.workload.layers = shape.pp;
  c.workload.hidden = 1;
  c.workload.batch = microbatches * shape.dp;
  c.backend = runtime::BackendKind::kCpu;
  c.steps = steps;
  const exec::RunResult r = exec::run(c);
  size_t per_rank = 0;
  for (const auto& p : c.schedule.ranks) per_rank = std::max(per_rank, p.size());
  Measured m;
  for (size_t s = 1; s < r.timeline.steps.size(); ++s) {  // step 0 warms up
    m.window_ns += static_cast<double>(r.timeline.steps[s].end_ns - r.timeline.steps[s].begin_ns);
    m.actions += static_cast<double>(per_rank);
  }
  return m;
}

void report(benchmark::State& state, schedule::Family family, mesh::MeshShape shape) {
  const int microbatches = static_cast<int>(state.range(0));
  Measured total;
  for (auto _ : state) {
    const Measured m = run_tiny(family, shape, microbatches, 21);
    state.SetIterationTime(m.window_ns * 1e-9);
    total.window_ns += m.window_ns;
    total.actions += m.actions;
  }
  state.counters["ns_per_action"] = total.window_ns / total.actions;
  state.counters["actions_per_step"] = total.actions / (20.0 * state.iterations());
}

// One rank: F, B for every microbatch, then STEP. No transfers: the executor loop and tracer.
void BM_OneRank(benchmark::State& state) { report(state, schedule::Family::kGpipe, {1, 1, 1}); }
BENCHMARK(BM_OneRank)->Arg(64)->UseManualTime()->Unit(benchmark::kMillisecond);

// Two ranks in a 1F1B pipeline: adds a send/recv per microbatch and direction, and the wake-up
// of the waiting thread on the critical path.
void BM_TwoRankPipeline(benchmark::State& state) {
  report(state, schedule::Family::kOneFOneB, {1, 2, 1});
}
BENCHMARK(BM_TwoRankPipeline)->Arg(64)->UseManualTime()->Unit(benchmark::kMillisecond);

// Send then receive on one thread through the cpu backend's mailbox: the copy path without a
// wake-up (64 floats).
void BM_MailboxRoundTrip(benchmark::State& state) {
  auto backend = runtime::make_backend(runtime::BackendKind::kCpu, {{1, 2, 1}});
  float data[64] = {};
  for (auto _ : state) {
    backend->transport(0).send(1, 7, data, sizeof data);
    backend->transport(1).recv(0, 7, data, sizeof data);
  }
}
BENCHMARK(BM_MailboxRoundTrip);

}  // namespace

BENCHMARK_MAIN();
