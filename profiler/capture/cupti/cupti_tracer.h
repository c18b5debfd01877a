// The ActionTracer of the cuda backends: around each action an NVTX range named by its label
// ("F s2 mb5", payload = the action's external id) and that id pushed on CUPTI's external
// correlation stack, so every kernel and copy the action launches maps back to it; at finish()
// the CUPTI records become the run's Timeline (timeline_builder.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "profiler/capture/cupti/activity_capture.h"
#include "profiler/capture/cupti/cupti_api.h"
#include "profiler/capture/cupti/timeline_builder.h"

namespace meshscope::capture::cupti {

// A stream a rank issues work on, and the lane its records go to.
struct TracedStream {
  int rank = 0;
  uint32_t gpu = 0;  // CUDA device ordinal
  CUstream stream = nullptr;
  std::string lane;  // "compute", "comm"
  traces::LaneKind kind = traces::LaneKind::kCompute;
};

// Sits between the hot path and NVTX, so tests can run the tracer without NVTX's injection.
class RangeMarker {
 public:
  virtual ~RangeMarker() = default;
  // Called once, after CUPTI records the NVTX kinds: the marker's first NVTX call (the domain's
  // creation) comes after that, so CUPTI sees the domain being made.
  virtual void open() = 0;
  virtual void push(const std::string& label, uint64_t payload) = 0;
  virtual void pop() = 0;
};
// NVTX ranges in the "meshscope" domain. NVTX reads NVTX_INJECTION64_PATH at its first call, so
// prepare_nvtx_injection() (cupti_entry.h) must have pointed it at libcupti before then.
std::unique_ptr<RangeMarker> make_nvtx_marker();

class CuptiTracer final : public ActionTracer {
 public:
  CuptiTracer(std::unique_ptr<CuptiApi> api, std::unique_ptr<RangeMarker> marker,
              std::vector<TracedStream> streams);
  ~CuptiTracer() override;

  void begin_run(const RunInfo& run) override;
  void step_begin(int rank, int step) override;
  void action_begin(int rank, int step, const ActionInfo& action) override;
  void inner_begin(int rank, int step, const InnerInfo& inner) override;
  void inner_end(int rank, int step, const InnerInfo& inner, int64_t ready_ns) override;
  void action_end(int rank, int step, const ActionInfo& action, const ActionEnd& end) override;
  void step_end(int rank, int step) override;
  traces::Timeline finish() override;

  // What the last finish() found (dropped records, how ops were labelled).
  const BuildReport& report() const { return report_; }

 private:
  // Written only by its rank's thread between begin_run and finish.
  struct alignas(64) RankState {
    uint32_t thread = 0;
    int current_action = 0;
    std::vector<HostAction> actions;
  };
  int inner_index(int rank, const InnerInfo& inner) const;

  std::unique_ptr<CuptiApi> api_;
  std::unique_ptr<RangeMarker> marker_;
  std::vector<TracedStream> streams_;
  ActivityCapture capture_;
  RunInfo run_;
  std::vector<RankState> ranks_;
  BuildReport report_;
};

}  // namespace meshscope::capture::cupti
