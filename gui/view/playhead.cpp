// Playhead state: seeking, playing, looping.
#include "gui/view/playhead.h"

#include <algorithm>
#include <cmath>

namespace meshscope::gui {

void Playhead::set_range(int64_t begin_ns, int64_t end_ns) {
  begin_ns_ = begin_ns;
  end_ns_ = std::max(end_ns, begin_ns);
  offset_ns_ = 0;
  playing_ = false;
}

int64_t Playhead::t_ns() const {
  return begin_ns_ + static_cast<int64_t>(std::llround(offset_ns_));
}

double Playhead::fraction() const {
  const double range = static_cast<double>(end_ns_ - begin_ns_);
  return range > 0 ? offset_ns_ / range : 0.0;
}

void Playhead::seek(int64_t t_ns) {
  offset_ns_ = static_cast<double>(std::clamp(t_ns, begin_ns_, end_ns_) - begin_ns_);
}

void Playhead::seek_fraction(double fraction) {
  offset_ns_ = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(end_ns_ - begin_ns_);
}

void Playhead::play() {
  const double range = static_cast<double>(end_ns_ - begin_ns_);
  if (offset_ns_ >= range) offset_ns_ = 0;
  playing_ = range > 0;
}

void Playhead::set_duration_s(double seconds) {
  if (seconds > 0 && std::isfinite(seconds)) duration_s_ = seconds;
}

void Playhead::advance(double wall_s) {
  if (!playing_ || !(wall_s > 0)) return;
  const double range = static_cast<double>(end_ns_ - begin_ns_);
  double t = offset_ns_ + wall_s / duration_s_ * range;
  if (t >= range) {
    if (loop_) {
      t = std::fmod(t - range, range);
    } else {
      t = range;
      playing_ = false;
    }
  }
  offset_ns_ = t;
}

}  // namespace meshscope::gui
