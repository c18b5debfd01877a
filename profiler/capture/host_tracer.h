// The host-clock tracer: stamps every action with the monotonic clock on its rank's thread and
// builds the Timeline at the end. Exact on the cpu backend, where work has run when a call returns.
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/capture/action_tracer.h"

namespace meshscope::capture {

class HostClockTracer final : public ActionTracer {
 public:
  void begin_run(const RunInfo& run) override;
  void step_begin(int rank, int step) override;
  void action_begin(int rank, int step, const ActionInfo& action) override;
  void inner_begin(int rank, int step, const InnerInfo& inner) override;
  void inner_end(int rank, int step, const InnerInfo& inner, int64_t ready_ns) override;
  void action_end(int rank, int step, const ActionInfo& action, const ActionEnd& end) override;
  void step_end(int rank, int step) override;
  traces::Timeline finish() override;

 private:
  struct Record {
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    int64_t ready_ns = 0;
    int64_t done_ns = 0;
    int64_t called_ns = 0;  // ActionEnd::called_ns
    int64_t activation_bytes = -1;
    int32_t step = 0;
    int32_t index = 0;
  };
  struct InnerRecord {
    int64_t begin_ns = 0;
    int64_t end_ns = 0;
    int64_t ready_ns = 0;
    const InnerInfo* info = nullptr;
    int32_t step = 0;
    int32_t parent = 0;  // index of the enclosing action
  };
  struct StepMark {
    int64_t begin_ns = -1;
    int64_t end_ns = -1;
  };
  // Written by one rank thread only; aligned so neighbours do not share cache lines.
  struct alignas(64) RankLog {
    std::vector<Record> records;
    std::vector<InnerRecord> inner;
    std::vector<StepMark> steps;
    Record open;
    InnerRecord open_inner;
  };

  void build_spans(traces::Timeline& tl) const;

  RunInfo run_;
  int64_t origin_ns_ = 0;
  std::vector<RankLog> ranks_;
};

}  // namespace meshscope::capture
