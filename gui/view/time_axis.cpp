// Zoom, pan and ruler maths of the timeline's time axis.
#include "gui/view/time_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meshscope::gui {

void TimeAxis::set_bounds(int64_t begin_ns, int64_t end_ns) {
  origin_ns_ = begin_ns;
  data_end_ns_ = std::max(end_ns, begin_ns + 1);
  fit();
}

void TimeAxis::set_width_px(double width_px) {
  width_px_ = std::max(width_px, 1.0);
  clamp();
}

int64_t TimeAxis::begin_ns() const {
  return origin_ns_ + static_cast<int64_t>(std::floor(begin_rel_ns_));
}

int64_t TimeAxis::end_ns() const {
  return origin_ns_ + static_cast<int64_t>(std::ceil(end_rel_ns()));
}

int64_t TimeAxis::t_of(double x_px) const {
  return origin_ns_ + static_cast<int64_t>(std::llround(rel_of(x_px)));
}

void TimeAxis::show(int64_t begin_ns, int64_t end_ns) { show_rel(rel(begin_ns), rel(end_ns)); }

void TimeAxis::show_rel(double begin_rel_ns, double end_rel_ns) {
  if (end_rel_ns < begin_rel_ns) std::swap(begin_rel_ns, end_rel_ns);
  begin_rel_ns_ = begin_rel_ns;
  ns_per_px_ = (end_rel_ns - begin_rel_ns) / width_px_;
  clamp();
}

void TimeAxis::fit() {
  begin_rel_ns_ = 0;
  ns_per_px_ = data_range_ns() / width_px_;
  clamp();
}

void TimeAxis::zoom_at(double x_px, double factor) {
  if (!(factor > 0)) return;
  const double t_rel = begin_rel_ns_ + x_px * ns_per_px_;
  ns_per_px_ /= factor;
  clamp();
  // Re-anchor after clamping the scale so the point under the cursor stays put even at a limit.
  begin_rel_ns_ = t_rel - x_px * ns_per_px_;
  clamp();
}

void TimeAxis::pan_px(double dx_px) {
  begin_rel_ns_ -= dx_px * ns_per_px_;
  clamp();
}

TimeAxis TimeAxis::shifted(int64_t delta_ns) const {
  TimeAxis other = *this;
  other.origin_ns_ += delta_ns;
  other.data_end_ns_ += delta_ns;
  return other;
}

void TimeAxis::clamp() {
  // Zoomed out, the data fills at most two thirds of the width; zoomed in, the range stays
  // above kMinRangeNs so pixels never map to less than a fraction of a nanosecond.
  const double max_range = std::max(data_range_ns() * 1.5, kMinRangeNs);
  ns_per_px_ = std::clamp(ns_per_px_, kMinRangeNs / width_px_, max_range / width_px_);
  // Keep the centre of the view inside the data so it can never be panned away and lost.
  const double half = 0.5 * range_ns();
  begin_rel_ns_ = std::clamp(begin_rel_ns_, -half, data_range_ns() - half);
}

RulerTicks ruler_ticks(const TimeAxis& axis, double min_gap_px) {
  RulerTicks ticks;
  const double min_step_ns = std::max(min_gap_px * axis.ns_per_px(), 1.0);
  int64_t decade = 1;
  while (decade * 10 <= static_cast<int64_t>(min_step_ns)) decade *= 10;
  for (int64_t mult : {1, 2, 5, 10}) {
    if (static_cast<double>(decade * mult) >= min_step_ns) {
      ticks.step_ns = decade * mult;
      break;
    }
  }
  // Ticks sit on multiples of the step counted from the origin, so labels read as round offsets.
  const double step = static_cast<double>(ticks.step_ns);
  const double first = std::ceil(axis.begin_rel_ns() / step);
  for (double k = first; k * step <= axis.end_rel_ns(); k += 1) ticks.rel_ns.push_back(k * step);
  return ticks;
}

std::string format_ruler_label(double offset_ns, int64_t step_ns) {
  if (std::abs(offset_ns) < 0.5) return "0";
  struct Unit {
    double ns;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "\xC2\xB5s"}, {1, "ns"}};
  const double step = static_cast<double>(step_ns);
  Unit unit = kUnits[3];
  for (const Unit& u : kUnits) {
    if (u.ns <= step * 10) {
      unit = u;
      break;
    }
  }
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step / unit.ns) - 1e-9)));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, offset_ns / unit.ns, unit.suffix);
  return buf;
}

}  // namespace meshscope::gui
