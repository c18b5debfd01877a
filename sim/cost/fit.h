// Fitting a Calibration from profiled Timelines (`meshscope calibrate`): per compute phase the
// achieved FLOP rate and fixed overhead (duration = overhead + FLOPs / rate, least squares over
// the spans that carry FLOPs, less the collectives nested in them: ComputeTime), and alpha/beta of
// transfers (recv spans: duration = alpha + bytes / bandwidth) and of collectives (on bus bytes:
// the op and group of Timeline::collectives, the group's size from the run descriptor's mesh or,
// for an imported NCCL kernel, as its trace names it; all-to-alls fitted apart from the others).
// An imported collective is timed on the last of its group to arrive where the trace holds the
// group's ranks, alone otherwise (LinkFit::timed_alone). The first step of a multi-step trace is
// left out (warm-up).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/cost/hardware.h"
#include "traces/timeline.h"

namespace meshscope::cost {

// duration_ns = intercept + slope * x, least squares; with x nearly constant the intercept is
// 0 and the slope the ratio of sums. A negative intercept is refitted through the origin.
struct LineFit {
  double intercept = 0;
  double slope = 0;
  double rms_relative_error = 0;
  int samples = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// The time compute spans spent computing: a span's duration less the collectives its action
// issued itself (a tp all-reduce, an ep all-to-all: collective spans of its device, stage,
// microbatch and phase inside it, as the executor's tracers nest them), from the moment its rank
// reached each (its wait for the group, Timeline::waits) to its end. The simulator prices them on
// their own from the collective fits (sim/predict/workload_costs.h, stage_timing), and the wait
// is none of the span's work: either would otherwise be fitted as compute.
class ComputeTime {
 public:
  explicit ComputeTime(const traces::Timeline& t);
  int64_t ns(const traces::Span& s) const;

 private:
  struct Key {
    uint16_t device;
    int16_t stage;
    int32_t microbatch;
    traces::Phase phase;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, std::vector<std::pair<int64_t, int64_t>>> nested_;  // sorted (begin, end)
};

// Phases or links without spans stay uncalibrated (GPU kernel traces carry no FLOPs: only their
// transfers and collectives are fitted); a fit of links alone records no precision. Throws
// std::invalid_argument when nothing can be fitted.
Calibration fit_calibration(const std::vector<const traces::Timeline*>& timelines,
                            const Hardware& hw, Precision precision);

}  // namespace meshscope::cost
