// Two runs side by side (measured and simulated, or two schedules): devices matched by mesh place
// (or by rank, where a run has none) and the per-device differences the compare view lists beside
// the two stacked timelines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/analysis.h"
#include "traces/timeline.h"

namespace meshscope::gui {

// Times are per step (a device's total over its run's step windows / their count), as the step
// times beside them are: two runs of 2 and 1,219 steps compare step for step.
struct DeviceDiff {
  int rank = 0;      // a's, where a has the device
  std::string name;  // a's, where a has the device
  std::string name_b;
  std::optional<uint16_t> device_a;  // absent when only the other run has this rank
  std::optional<uint16_t> device_b;
  int64_t busy_a_ns = 0, busy_b_ns = 0;
  int64_t comm_a_ns = 0, comm_b_ns = 0;
  int64_t idle_a_ns = 0, idle_b_ns = 0;
  double bubble_a = 0, bubble_b = 0;
  bool in_both() const { return device_a.has_value() && device_b.has_value(); }
  // B - A; nullopt unless both runs have the rank.
  std::optional<int64_t> busy_delta_ns() const {
    return in_both() ? std::optional<int64_t>(busy_b_ns - busy_a_ns) : std::nullopt;
  }
  std::optional<int64_t> idle_delta_ns() const {
    return in_both() ? std::optional<int64_t>(idle_b_ns - idle_a_ns) : std::nullopt;
  }
};

struct CompareModel {
  int64_t step_a_ns = 0, step_b_ns = 0;
  double bubble_a = 0, bubble_b = 0;
  std::vector<DeviceDiff> devices;  // ordered by mesh place (matched_by_place), else by rank
  // Devices paired by their (dp, pp, tp) place: every device of both runs has one. Else by rank.
  bool matched_by_place = false;
  // b's time axis shifted onto a's: b's first step begins where a's does.
  int64_t b_to_a_shift_ns = 0;
  double step_ratio() const {
    return step_a_ns > 0 ? static_cast<double>(step_b_ns) / static_cast<double>(step_a_ns) : 0.0;
  }
};

CompareModel compare_runs(const traces::Timeline& a, const traces::TimelineAnalysis& analysis_a,
                          const traces::Timeline& b, const traces::TimelineAnalysis& analysis_b);

}  // namespace meshscope::gui
