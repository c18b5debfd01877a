// Annotation ranges by name, as `nsys stats --report nvtx_sum` lists NVTX ranges: the NVTX ranges
// of an Nsight export or of meshscope's CUPTI capture, the record_function / user_annotation
// ranges of a PyTorch profile, torch's pipeline actions and ProfilerStep#N ranges.
//
//   instances  spans of kind annotation (timeline.h SpanKind::kAnnotation) with the name, over the
//              whole trace (not only the step windows), every device;
//   on         where they lie: "host" (a thread's lane) or "device" (a GPU stream's lane: Kineto's
//              gpu_user_annotation and cuda_sync, a CPU rank's compute lane in a torch job);
//              a name on both is two rows;
//   total      Σ durations, not their union: nested or overlapping instances each count, as in
//              nvtx_sum, so the shares (total / Σ over every row) add up to 100%;
//   mean, median, min, max  of the instances' durations (median: the lower middle of an even
//              count).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/timeline.h"

namespace meshscope::traces {

struct RangeStat {
  std::string name;
  bool on_device = false;
  int64_t instances = 0;
  int64_t total_ns = 0;
  double mean_ns = 0;
  int64_t median_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double share = 0;  // total_ns / RangeSummary::total_ns
};

struct RangeSummary {
  int64_t instances = 0;       // every annotation span
  int64_t names = 0;           // distinct (name, on) rows, shown or not
  int64_t total_ns = 0;        // Σ of every annotation span's duration
  std::vector<RangeStat> top;  // by total_ns, descending (ties by name)
};

// `top` keeps the `top_n` rows with the most total time.
RangeSummary range_summary(const Timeline& t, size_t top_n = 10);

nlohmann::json to_json(const RangeSummary& r);
std::string format_range_table(const RangeSummary& r);

}  // namespace meshscope::traces
