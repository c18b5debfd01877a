// The Timeline builder's working state, shared by its two source files (GPU records in
// timeline_builder.cpp; host actions, flows, counters and steps in timeline_links.cpp).
#pragma once

#include <climits>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profiler/capture/cupti/external_id.h"
#include "profiler/capture/cupti/labeler.h"
#include "profiler/capture/cupti/timeline_builder.h"

namespace meshscope::capture::cupti::detail {

// The GPU work of one action (or inner collective): its spans' extent and the ends for flows.
struct ActionGpu {
  uint32_t first_span = UINT32_MAX;  // earliest-beginning span
  uint32_t last_span = UINT32_MAX;   // latest-ending span
  int64_t begin_ns = INT64_MAX;
  int64_t end_ns = INT64_MIN;
  uint16_t lane = 0;  // lane of its first span
  bool comm_bytes_given = false;
};

class Builder {
 public:
  explicit Builder(const BuildInput& in);
  traces::Timeline run(BuildReport& report);

 private:
  // timeline_builder.cpp
  void add_devices();
  void add_gpu_ops(BuildReport& report);
  void add_api_calls();
  void add_foreign_ranges();
  // A span over CUPTI times [begin, end) on the lane `lanes` gives the rank running on `thread`
  // (host_lane_ or api_lane_); none when no rank runs on it (another thread of the process).
  void add_thread_span(uint32_t thread, const std::vector<uint16_t>& lanes, int64_t begin,
                       int64_t end, traces::SpanKind kind, std::string_view name);
  uint16_t lane_for(uint16_t device, const GpuOp& op, traces::LaneKind kind);
  uint16_t unattributed_device(uint32_t gpu);
  const ActionInfo* action_of(const ExternalKey& k) const;
  const InnerInfo* inner_of(const ExternalKey& k) const;
  void note_step(std::map<int, traces::StepWindow>& steps, int step, int64_t b, int64_t e);
  // timeline_links.cpp
  void add_host_actions();
  void add_action_annotations();
  void add_flows(BuildReport& report);
  void add_counters();
  void add_steps();

  const BuildInput& in_;
  RecordLabeler labeler_;
  traces::Timeline t_;
  std::vector<uint16_t> host_lane_, api_lane_;  // per rank
  // CUPTI stream ids are unique within a context only: a stream is (gpu, context, stream).
  using StreamAt = std::tuple<uint32_t, uint32_t, uint32_t>;
  std::map<std::pair<uint16_t, StreamAt>, uint16_t> lanes_;  // (timeline device, stream) -> lane
  std::map<StreamAt, int> stream_rank_;                      // stream -> rank
  std::map<uint32_t, uint16_t> unattributed_;                // gpu -> device
  std::unordered_map<uint32_t, int> thread_rank_;
  std::unordered_map<uint64_t, ActionGpu> gpu_;       // encode(key) -> GPU work
  std::unordered_map<uint64_t, uint32_t> host_span_;  // encode(key) -> host annotation span
  std::map<int, traces::StepWindow> gpu_steps_, host_steps_;
};

}  // namespace meshscope::capture::cupti::detail
