// Fitting a Calibration from profiled Timelines (`meshscope calibrate`): per compute phase the
// achieved FLOP rate and fixed overhead (duration = overhead + FLOPs / rate, least squares over
// the spans that carry FLOPs), and alpha/beta of transfers (recv spans: duration = alpha + bytes /
// bandwidth) and of collectives (on bus bytes: the op and group of Timeline::collectives, the
// group's size from the run descriptor's mesh; all-to-alls fitted apart from the others). The
// first step of a multi-step trace is left out (warm-up).
#pragma once

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

// Phases or links without spans stay uncalibrated (GPU kernel traces carry no FLOPs: only their
// transfers and collectives are fitted). Throws std::invalid_argument when nothing can be fitted.
Calibration fit_calibration(const std::vector<const traces::Timeline*>& timelines,
                            const Hardware& hw, Precision precision);

}  // namespace meshscope::cost
