// Least-squares line between CUPTI and host timestamps; fits in doubles relative to the first
// pair because raw nanosecond timestamps (~1.8e18) exceed a double's 53-bit precision.
#include "profiler/capture/cupti/clock_sync.h"

#include <cmath>

#include "profiler/capture/cupti/cupti_api.h"
#include "profiler/runtime/clock.h"

namespace meshscope::capture::cupti {

void ClockSync::sample(CuptiApi& api) {
  ClockPair best;
  int64_t best_bracket = INT64_MAX;
  for (int i = 0; i < 3; ++i) {
    const int64_t before = runtime::host_now_ns();
    const int64_t cupti = api.timestamp_ns();
    const int64_t after = runtime::host_now_ns();
    if (after - before < best_bracket) {
      best_bracket = after - before;
      best = {cupti, before + (after - before) / 2};
    }
  }
  add(best);
}

ClockSync::Fit ClockSync::fit() const {
  Fit f;
  if (pairs_.empty()) return f;
  const ClockPair& base = pairs_.front();
  const double n = static_cast<double>(pairs_.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : pairs_) {
    const double x = static_cast<double>(p.cupti_ns - base.cupti_ns);
    const double y = static_cast<double>(p.host_ns - base.host_ns);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double var = sxx - sx * sx / n;
  // Pairs taken within a microsecond of each other say nothing about the slope.
  if (pairs_.size() >= 2 && var > 1e6) f.slope = (sxy - sx * sy / n) / var;
  f.intercept = (sy - f.slope * sx) / n;
  return f;
}

int64_t ClockSync::to_host(int64_t cupti_ns) const {
  if (pairs_.empty()) return cupti_ns;
  const ClockPair& base = pairs_.front();
  const Fit f = fit();
  const double rel = static_cast<double>(cupti_ns - base.cupti_ns);
  return base.host_ns + std::llround(f.intercept + f.slope * rel);
}

double ClockSync::drift_ppm() const { return (fit().slope - 1.0) * 1e6; }

int64_t ClockSync::offset_ns() const {
  if (pairs_.empty()) return 0;
  return to_host(pairs_.front().cupti_ns) - pairs_.front().cupti_ns;
}

}  // namespace meshscope::capture::cupti
