// The timeline view's mouse and keyboard handling, driven through ImGui's input state on the
// null platform (real frames, no window): zoom at the cursor, drag to pan, right-drag to zoom to
// a selection, click a header to collapse, keys to pan and fit.
#include <gtest/gtest.h>
#include <imgui.h>

#include <cmath>

#include "gui/app/app.h"
#include "gui/app/platform.h"
#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

class Interaction : public ::testing::Test {
 protected:
  Interaction() : platform_(1400, 800) {
    SyntheticOptions o;
    o.pp = 4;
    o.microbatches = 8;
    o.steps = 2;
    app_.session().add_run(make_run(make_synthetic_pipeline(o), "pipeline"));
    frame();
    frame();
  }

  void frame() {
    platform_.begin_frame(1.0f / 60);
    app_.frame(0);
    platform_.end_frame();
    ImGuiIO& io = ImGui::GetIO();
    io.MouseWheel = 0;
  }
  void move_to(float x, float y) {
    ImGui::GetIO().MousePos = ImVec2(x, y);
    frame();
  }
  void press(int button, bool down) {
    ImGui::GetIO().MouseDown[button] = down;
    frame();
  }
  // A point inside the plot, on the first row of device 1; whole pixels, as ImGui rounds the
  // mouse position down.
  ImVec2 plot_point(float x_fraction) {
    const TimelineView& v = app_.timeline();
    const size_t row = app_.session().runs[0]->index->device_row_begin(1);
    const float left = v.screen_x(v.axis().begin_ns());
    return ImVec2(std::floor(left + static_cast<float>(v.axis().width_px()) * x_fraction),
                  std::floor(v.screen_row_top(row) + 8));
  }
  TimeAxis& axis() { return app_.timeline().axis(); }

  NullPlatform platform_;
  App app_;
};

TEST_F(Interaction, WheelZoomsAtTheCursorKeepingItsTimeUnderIt) {
  const ImVec2 p = plot_point(0.7f);
  move_to(p.x, p.y);
  const int64_t t_before = app_.timeline().time_at_screen_x(p.x);
  const double range = axis().range_ns();
  ImGui::GetIO().MouseWheel = 2;  // two notches in
  frame();
  EXPECT_NEAR(axis().range_ns(), range / (1.25 * 1.25), range * 1e-9);
  EXPECT_NEAR(static_cast<double>(app_.timeline().time_at_screen_x(p.x)),
              static_cast<double>(t_before), axis().ns_per_px());
}

TEST_F(Interaction, DraggingPansByTheMouseTravel) {
  ImGui::GetIO().MouseWheel = 3;  // zoom in first so there is room to pan both ways
  const ImVec2 p = plot_point(0.5f);
  move_to(p.x, p.y);
  const double begin = axis().begin_rel_ns();
  const double ns_per_px = axis().ns_per_px();
  press(0, true);
  for (int i = 1; i <= 10; ++i) move_to(p.x - 12.0f * static_cast<float>(i), p.y);
  press(0, false);
  EXPECT_NEAR(axis().begin_rel_ns(), begin + 120 * ns_per_px, ns_per_px);
  EXPECT_NEAR(axis().ns_per_px(), ns_per_px, ns_per_px * 1e-9);
}

TEST_F(Interaction, RightDragZoomsToTheSelection) {
  const ImVec2 a = plot_point(0.2f), b = plot_point(0.6f);
  const int64_t ta = app_.timeline().time_at_screen_x(a.x),
                tb = app_.timeline().time_at_screen_x(b.x);
  move_to(a.x, a.y);
  press(1, true);
  for (int i = 1; i <= 8; ++i) move_to(a.x + (b.x - a.x) * static_cast<float>(i) / 8, a.y);
  press(1, false);
  EXPECT_NEAR(static_cast<double>(axis().begin_ns()), static_cast<double>(ta),
              2 * axis().ns_per_px());
  EXPECT_NEAR(static_cast<double>(axis().end_ns()), static_cast<double>(tb),
              2 * axis().ns_per_px());
}

TEST_F(Interaction, ClickingADeviceHeaderCollapsesIt) {
  const gui::Run& run = *app_.session().runs[0];
  const size_t row = run.index->device_row_begin(1);
  const TimelineView& v = app_.timeline();
  ASSERT_TRUE(v.layout().row_shown(row));
  const float header_y = v.screen_row_top(row) - v.layout().options().header_px / 2;
  move_to(plot_point(0.5f).x, header_y);
  press(0, true);
  press(0, false);
  EXPECT_FALSE(app_.timeline().layout().row_shown(row));
  EXPECT_TRUE(app_.timeline().layout().row_shown(run.index->device_row_begin(0)));
}

TEST_F(Interaction, ArrowKeysPanAndHomeFits) {
  ImGuiIO& io = ImGui::GetIO();
  // The GLFW backend fills the key map; on the null platform the test does.
  io.KeyMap[ImGuiKey_LeftArrow] = 263;
  io.KeyMap[ImGuiKey_Home] = 268;
  io.MouseWheel = 4;
  frame();
  const double begin = axis().begin_rel_ns();
  io.KeysDown[263] = true;
  frame();
  io.KeysDown[263] = false;
  frame();
  EXPECT_NEAR(axis().begin_rel_ns(), begin - 0.1 * axis().range_ns(), axis().ns_per_px());
  io.KeysDown[268] = true;
  frame();
  io.KeysDown[268] = false;
  frame();
  const gui::Run& run = *app_.session().runs[0];
  EXPECT_EQ(axis().begin_ns(), run.begin_ns());
  EXPECT_NEAR(axis().range_ns(), static_cast<double>(run.end_ns() - run.begin_ns()), 1);
}

}  // namespace
}  // namespace meshscope::gui
