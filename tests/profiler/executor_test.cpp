// What exec::run reports besides the math: wall_s covers the steps only (so runs with different
// tracers compare), and the number of actions executed.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "exec_test_util.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/runtime/cpu_backend.h"

namespace meshscope::exec {
namespace {

// A host-clock tracer whose Timeline takes long to build, like CUPTI's flush and decode.
class SlowFinishTracer final : public capture::ActionTracer {
 public:
  void begin_run(const capture::RunInfo& run) override { inner_.begin_run(run); }
  void step_begin(int rank, int step) override { inner_.step_begin(rank, step); }
  void action_begin(int rank, int step, const capture::ActionInfo& a) override {
    inner_.action_begin(rank, step, a);
  }
  void inner_begin(int rank, int step, const capture::InnerInfo& i) override {
    inner_.inner_begin(rank, step, i);
  }
  void inner_end(int rank, int step, const capture::InnerInfo& i, int64_t ready_ns) override {
    inner_.inner_end(rank, step, i, ready_ns);
  }
  void action_end(int rank, int step, const capture::ActionInfo& a,
                  const capture::ActionEnd& end) override {
    inner_.action_end(rank, step, a, end);
  }
  void step_end(int rank, int step) override { inner_.step_end(rank, step); }
  traces::Timeline finish() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return inner_.finish();
  }

 private:
  capture::HostClockTracer inner_;
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
  const RunResult r = run(c, backend, tracer);
  ASSERT_EQ(r.timeline.steps.size(), 3u);
  const double steps_s =
      static_cast<double>(r.timeline.steps.back().end_ns - r.timeline.steps.front().begin_ns) * 1e-9;
  // The step windows are stamped by the tracer a few ns after the ranks' own marks: wall_s
  // matches them, and holds nothing of the 0.3 s the tracer took to finish.
  EXPECT_GT(r.wall_s, 0);
  EXPECT_NEAR(r.wall_s, steps_s, 0.05);  // loose: a preemption between the two stamps
  EXPECT_LT(r.wall_s, 0.3);
  size_t actions = 0;
  for (const auto& program : c.schedule.ranks) actions += program.size();
  EXPECT_EQ(r.actions, static_cast<int64_t>(actions * 3));
}

}  // namespace
}  // namespace meshscope::exec
