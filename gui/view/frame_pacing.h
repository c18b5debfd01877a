// When the interactive viewer draws a frame: continuously while something changes on its own
// (playback, a what-if simulation in flight), for a few frames after each input event (ImGui needs
// them to settle hovers, clicks and scrolling), and otherwise not at all: the loop sleeps in
// glfwWaitEventsTimeout instead of redrawing an unchanged window at the display's rate.
#pragma once

namespace meshscope::gui {

class FramePacing {
 public:
  // Frames drawn after the last input event: ImGui reacts to a click one frame late and animates
  // nothing longer than that (assumption read from imgui.cpp: hover and nav state settle in two).
  static constexpr int kSettleFrames = 3;
  // The longest sleep: the loop still wakes this often to notice a close request or a change that
  // came without an event.
  static constexpr double kIdleWaitS = 0.5;

  // How long the loop may wait for events before the next frame decision.
  double wait_s(bool animating) const { return animating || settle_ > 0 ? 0.0 : kIdleWaitS; }

  // After waiting: true when a frame must be drawn now. `had_event`: input, a resize, an expose
  // or a drop arrived while waiting; `animating`: playback or a background job is running.
  bool should_draw(bool had_event, bool animating) {
    if (had_event) settle_ = kSettleFrames;
    if (animating) return true;
    if (settle_ > 0) {
      --settle_;
      return true;
    }
    return false;
  }

 private:
  int settle_ = kSettleFrames;  // the first frames draw the window at all
};

}  // namespace meshscope::gui
