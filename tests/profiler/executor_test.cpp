// What exec::run reports besides the math: wall_s covers the steps only (so runs with different
// tracers compare), and the number of actions executed.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "exec_test_util.h"
#include "forwarding_tracer.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/runtime/cpu_backend.h"

namespace meshscope::exec {
namespace {

// A host-clock tracer whose Timeline takes long to build, like CUPTI's flush and decode.
class SlowFinishTracer final : public testing::ForwardingTracer {
 public:
  traces::Timeline finish() override {
    finish_called = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the slow work, not a wait
    return inner_.finish();
  }
  std::chrono::steady_clock::time_point finish_called;
};

TEST(Executor, WallTimeSpansTheStepsNotSetUpOrTheTimelineBuild) {
  model::WorkloadSpec spec;
  spec.layers = 2;
  spec.hidden = 8;
  spec.batch = 8;
  RunConfig c;
  c.workload = spec;
  c.schedule = testing::make_schedule(schedule::Family::kOneFOneB, {1, 2, 1}, 2);
  c.steps = 3;
  runtime::CpuBackend backend(c.schedule.mesh);
  SlowFinishTracer tracer;
  const auto called = std::chrono::steady_clock::now();
  const RunResult r = run(c, backend, tracer);
  ASSERT_EQ(r.timeline.steps.size(), 3u);
  // The tracer stamps a step's begin just after the ranks' mark of it, so the ranks' marks span at
  // least from the first step's begin to the last step's begin.
  const double steps_s =
      static_cast<double>(r.timeline.steps.back().begin_ns - r.timeline.steps.front().begin_ns) *
      1e-9;
  // Orderings, not thresholds: wall_s ends before the tracer's finish began (so it holds nothing
  // of the 0.3 s finish takes) and covers the steps.
  const double before_finish_s =
      std::chrono::duration<double>(tracer.finish_called - called).count();
  EXPECT_GT(r.wall_s, 0);
  EXPECT_LE(r.wall_s, before_finish_s);
  EXPECT_GE(r.wall_s, steps_s);
  size_t actions = 0;
  for (const auto& program : c.schedule.ranks) actions += program.size();
  EXPECT_EQ(r.actions, static_cast<int64_t>(actions * 3));
}

}  // namespace
}  // namespace meshscope::exec
