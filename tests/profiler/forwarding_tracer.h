// A host-clock tracer whose calls a test can intercept: each hook forwards to the real tracer
// unless overridden (a slow begin_run, a slow finish).
#pragma once

#include "profiler/capture/host_tracer.h"

namespace meshscope::exec::testing {

class ForwardingTracer : public capture::ActionTracer {
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
  traces::Timeline finish() override { return inner_.finish(); }

 protected:
  capture::HostClockTracer inner_;
};

}  // namespace meshscope::exec::testing
