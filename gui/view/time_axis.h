// The visible time range of a timeline view and the maths of zooming, panning and the ruler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshscope::gui {

// Maps trace time to horizontal pixels. Times are kept as doubles relative to an integer origin
// (the data's first nanosecond) so that epoch-based timestamps (~1.7e18 ns in imported traces)
// keep sub-nanosecond precision when zoomed in.
class TimeAxis {
 public:
  // The narrowest range the view zooms into, across its whole width.
  static constexpr double kMinRangeNs = 20.0;

  // The data extent; the view keeps part of it visible. Resets the view to show all of it.
  void set_bounds(int64_t begin_ns, int64_t end_ns);
  // Width of the plotting area; the visible range keeps its start and its ns per pixel.
  void set_width_px(double width_px);

  int64_t origin_ns() const { return origin_ns_; }
  double width_px() const { return width_px_; }
  double ns_per_px() const { return ns_per_px_; }
  // An absolute time as a double relative to the origin: exact for any int64 timestamp as long
  // as the trace itself spans less than 2^53 ns. All range comparisons happen in this frame.
  double rel(int64_t t_ns) const { return static_cast<double>(t_ns - origin_ns_); }
  // Visible range relative to the origin (its edges fall between nanoseconds).
  double begin_rel_ns() const { return begin_rel_ns_; }
  double end_rel_ns() const { return begin_rel_ns_ + range_ns(); }
  double range_ns() const { return ns_per_px_ * width_px_; }
  // Visible range as absolute nanoseconds, widened to whole nanoseconds.
  int64_t begin_ns() const;
  int64_t end_ns() const;

  // Pixel offset of an absolute time from the plotting area's left edge, and back (rounded to
  // the nearest nanosecond).
  double x_of(int64_t t_ns) const { return (rel(t_ns) - begin_rel_ns_) / ns_per_px_; }
  double x_of_rel(double rel_ns) const { return (rel_ns - begin_rel_ns_) / ns_per_px_; }
  int64_t t_of(double x_px) const;
  double rel_of(double x_px) const { return begin_rel_ns_ + x_px * ns_per_px_; }

  // Shows [begin_ns, end_ns) across the width (zoom to a selection). Clamped to the limits.
  void show(int64_t begin_ns, int64_t end_ns);
  void show_rel(double begin_rel_ns, double end_rel_ns);
  // Shows the whole data extent.
  void fit();
  // Zooms by `factor` (> 1 zooms in) keeping the time under pixel x fixed: the maths of zooming
  // at the mouse cursor.
  void zoom_at(double x_px, double factor);
  // Moves the content by dx pixels: positive dx drags it right, bringing earlier times in view.
  void pan_px(double dx_px);

  // The same view of a run whose clock is `delta_ns` ahead: x_of(t + delta_ns) on the result
  // equals x_of(t) here. Used to draw a second run under the first on a shared axis.
  TimeAxis shifted(int64_t delta_ns) const;

 private:
  void clamp();
  double data_range_ns() const { return static_cast<double>(data_end_ns_ - origin_ns_); }

  int64_t origin_ns_ = 0;
  int64_t data_end_ns_ = 1;
  double width_px_ = 1000;
  double begin_rel_ns_ = 0;  // visible begin relative to origin_ns_
  double ns_per_px_ = 1;
};

// Ruler ticks: a "nice" step (1, 2 or 5 times a power of ten nanoseconds) so that labelled ticks
// are at least min_gap_px apart, and the tick times inside the visible range.
struct RulerTicks {
  int64_t step_ns = 1;
  std::vector<double> rel_ns;  // relative to the axis origin (multiples of step_ns), ascending
};
RulerTicks ruler_ticks(const TimeAxis& axis, double min_gap_px);

// A short label for a duration or an offset, chosen by the ruler step so neighbouring labels
// differ: "0", "250 ns", "1.5 µs", "12 ms", "1.25 s".
std::string format_ruler_label(double offset_ns, int64_t step_ns);

}  // namespace meshscope::gui
