// Where frames happen: a GLFW window with an OpenGL 3 context and the Dear ImGui backends (the
// interactive viewer and --screenshot), or no window at all (--bench measures building frames).
// Both own the ImGui context; frames follow the official example_glfw_opengl3 loop order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gui/view/png.h"

struct GLFWwindow;
struct ImGuiContext;

namespace meshscope::gui {

// The ImGui context with the viewer's settings (no imgui.ini next to the user's files).
class ImGuiSession {
 public:
  ImGuiSession();
  ~ImGuiSession();
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;

 private:
  ImGuiContext* context_;
};

struct WindowOptions {
  int width = 1600;
  int height = 900;
  bool visible = true;  // false: an offscreen-sized hidden window for --screenshot
  std::string title = "meshscope";
};

class Window {
 public:
  // Throws std::runtime_error when no display can be opened (say so: DISPLAY, xvfb-run) or the
  // OpenGL 3 context cannot be made.
  explicit Window(const WindowOptions& options);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool should_close() const;
  // Waits up to `timeout_s` for events (0: only takes what is queued) and returns whether any
  // arrived since the last call: input, resize, expose, focus or a drop (gui/view/frame_pacing.h).
  bool wait_events(double timeout_s);
  // Polls events and starts an ImGui frame.
  void begin_frame();
  // Renders the ImGui frame into the back buffer; swaps unless told not to (a screenshot reads
  // the back buffer first).
  void end_frame(bool swap = true);
  // The back buffer as an RGBA image, top row first.
  Image read_pixels() const;
  // Files dropped on the window since the last call.
  std::vector<std::string> take_dropped_paths();
  // The GLFW window, for tests that drive its callbacks.
  GLFWwindow* handle() const { return window_; }

 private:
  static void on_drop(GLFWwindow* window, int count, const char** paths);
  // Installed before ImGui's own callbacks, which chain to these.
  void install_event_callbacks();

  GLFWwindow* window_ = nullptr;
  std::unique_ptr<ImGuiSession> imgui_;
  std::vector<std::string> dropped_;
  bool event_ = false;  // set by the callbacks, taken by wait_events
};

// Frames without a window or GPU: the font atlas is built and draw lists are produced exactly as
// on screen, then discarded. What --bench times.
class NullPlatform {
 public:
  NullPlatform(int width, int height);
  void begin_frame(float delta_s);
  void end_frame();

 private:
  ImGuiSession imgui_;
};

}  // namespace meshscope::gui
