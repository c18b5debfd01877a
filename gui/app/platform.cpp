// GLFW + OpenGL 3 window with the ImGui backends; the null platform for benchmarks.
#include "gui/app/platform.h"

#define GLFW_INCLUDE_NONE
#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace meshscope::gui {
namespace {

std::string last_glfw_error() {
  const char* text = nullptr;
  glfwGetError(&text);
  return text ? text : "unknown GLFW error";
}

}  // namespace

ImGuiSession::ImGuiSession() : context_(ImGui::CreateContext()) {
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // window layout is not worth a file in the user's folder
  io.LogFilename = nullptr;
  ImGui::StyleColorsDark();
}

ImGuiSession::~ImGuiSession() { ImGui::DestroyContext(context_); }

Window::Window(const WindowOptions& options) {
  if (!glfwInit()) {
    const char* display = std::getenv("DISPLAY");
    throw std::runtime_error(
        "cannot open a window (" + last_glfw_error() + ")" +
        (display && *display ? "" : "; DISPLAY is not set: run under xvfb-run"));
  }
  // GL 3.0 + GLSL 130, as example_glfw_opengl3 does on Linux.
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  glfwWindowHint(GLFW_VISIBLE, options.visible ? GLFW_TRUE : GLFW_FALSE);
  window_ =
      glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr, nullptr);
  if (!window_) {
    const std::string why = last_glfw_error();
    glfwTerminate();
    throw std::runtime_error("cannot create an OpenGL 3 window: " + why);
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(options.visible ? 1 : 0);
  glfwSetWindowUserPointer(window_, this);
  glfwSetDropCallback(window_, &Window::on_drop);
  install_event_callbacks();
  imgui_ = std::make_unique<ImGuiSession>();
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 130");
}

Window::~Window() {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  imgui_.reset();
  glfwDestroyWindow(window_);
  glfwTerminate();
}

void Window::on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* self = static_cast<Window*>(glfwGetWindowUserPointer(window));
  self->event_ = true;
  for (int i = 0; i < count; ++i) self->dropped_.emplace_back(paths[i]);
}

bool Window::should_close() const { return glfwWindowShouldClose(window_); }

void Window::install_event_callbacks() {
  // Each callback only notes that something happened; ImGui's callbacks (installed after, with
  // chaining) do the work and call these first.
  static const auto note = [](GLFWwindow* w) {
    static_cast<Window*>(glfwGetWindowUserPointer(w))->event_ = true;
  };
  glfwSetCursorPosCallback(window_, [](GLFWwindow* w, double, double) { note(w); });
  glfwSetMouseButtonCallback(window_, [](GLFWwindow* w, int, int, int) { note(w); });
  glfwSetScrollCallback(window_, [](GLFWwindow* w, double, double) { note(w); });
  glfwSetKeyCallback(window_, [](GLFWwindow* w, int, int, int, int) { note(w); });
  glfwSetCharCallback(window_, [](GLFWwindow* w, unsigned int) { note(w); });
  glfwSetCursorEnterCallback(window_, [](GLFWwindow* w, int) { note(w); });
  glfwSetWindowFocusCallback(window_, [](GLFWwindow* w, int) { note(w); });
  glfwSetFramebufferSizeCallback(window_, [](GLFWwindow* w, int, int) { note(w); });
  glfwSetWindowRefreshCallback(window_, [](GLFWwindow* w) { note(w); });
  glfwSetWindowCloseCallback(window_, [](GLFWwindow* w) { note(w); });
}

bool Window::wait_events(double timeout_s) {
  if (timeout_s > 0) {
    glfwWaitEventsTimeout(timeout_s);
  } else {
    glfwPollEvents();
  }
  return std::exchange(event_, false);
}

void Window::begin_frame() {
  glfwPollEvents();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Window::end_frame(bool swap) {
  ImGui::Render();
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  glViewport(0, 0, w, h);
  glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (swap) glfwSwapBuffers(window_);
}

Image Window::read_pixels() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  Image img{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * static_cast<size_t>(h) * 4)};
  std::vector<uint8_t> flipped(img.rgba.size());
  glFinish();
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, flipped.data());
  // GL's first row is the bottom one.
  const size_t stride = static_cast<size_t>(w) * 4;
  for (int y = 0; y < h; ++y) {
    std::copy_n(flipped.data() + static_cast<size_t>(h - 1 - y) * stride, stride,
                img.rgba.data() + static_cast<size_t>(y) * stride);
  }
  for (size_t i = 3; i < img.rgba.size(); i += 4) img.rgba[i] = 255;
  return img;
}

std::vector<std::string> Window::take_dropped_paths() { return std::exchange(dropped_, {}); }

NullPlatform::NullPlatform(int width, int height) {
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  // Large frames need more than 64K vertices per draw list, as the OpenGL 3 backend allows.
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  unsigned char* pixels = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(intptr_t{1}));
}

void NullPlatform::begin_frame(float delta_s) {
  ImGui::GetIO().DeltaTime = delta_s > 0 ? delta_s : 1.0f / 60;
  ImGui::NewFrame();
}

void NullPlatform::end_frame() { ImGui::Render(); }

}  // namespace meshscope::gui
