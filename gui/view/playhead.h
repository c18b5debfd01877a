// The replay playhead: a time inside the step that advances at a chosen speed while playing.
#pragma once

#include <cstdint>

namespace meshscope::gui {

class Playhead {
 public:
  // The range it plays over; resets the time to its begin and pauses.
  void set_range(int64_t begin_ns, int64_t end_ns);
  int64_t begin_ns() const { return begin_ns_; }
  int64_t end_ns() const { return end_ns_; }

  // The time, rounded to a nanosecond; kept inside as an offset from begin so it stays exact on
  // epoch-based clocks.
  int64_t t_ns() const;
  // Position in [0, 1] along the range.
  double fraction() const;
  // Clamped into the range.
  void seek(int64_t t_ns);
  void seek_fraction(double fraction);

  bool playing() const { return playing_; }
  // Playing from the end starts over from the begin.
  void play();
  void pause() { playing_ = false; }
  void toggle() { playing_ ? pause() : play(); }

  // Speed as how long the whole range takes to play, in wall-clock seconds.
  void set_duration_s(double seconds);
  double duration_s() const { return duration_s_; }
  bool loop() const { return loop_; }
  void set_loop(bool loop) { loop_ = loop; }

  // Advances by `wall_s` seconds of real time if playing. At the end it wraps to the begin when
  // looping, else stops there.
  void advance(double wall_s);

 private:
  int64_t begin_ns_ = 0;
  int64_t end_ns_ = 0;
  double offset_ns_ = 0;  // from begin_ns_
  double duration_s_ = 10;
  bool playing_ = false;
  bool loop_ = false;
};

}  // namespace meshscope::gui
