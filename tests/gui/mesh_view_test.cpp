// The mesh replay view on traces with many devices: what it draws stays bounded (a strip lane
// per pixel row at most, a capped number of cells, no text in cells too small for it), so a
// 65,535-device trace draws in one frame instead of building gigabytes of vertices.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <cstdio>

#include "gui/app/app.h"
#include "gui/app/mesh_view.h"
#include "gui/app/platform.h"
#include "gui/view/mesh_layout.h"
#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

// Vertices of one frame of the mesh view on a dp x pp x tp synthetic run.
int mesh_frame_vertices(int pp, int tp) {
  NullPlatform platform(1600, 900);
  App app;
  SyntheticOptions o;
  o.pp = pp;
  o.tp = tp;
  o.microbatches = 1;
  app.session().add_run(make_run(make_synthetic_pipeline(o), "wide"));
  app.set_view(ViewKind::kMesh);
  int vertices = 0;
  for (int frame = 0; frame < 3; ++frame) {
    platform.begin_frame(1.0f / 60);
    app.frame(0);
    platform.end_frame();
    vertices = ImGui::GetDrawData()->TotalVtxCount;
  }
  EXPECT_EQ(app.view(), ViewKind::kMesh);
  std::printf("mesh view, %d devices: %d vertices\n", pp * tp, vertices);
  return vertices;
}

// A simulation of identical replicas traces one device per stage: the view says the mesh they
// stand for, from the run's typed flag (RunDescriptor::replicas_simulated_once).
TEST(MeshViewNote, ReplicasSimulatedOnceAreSaidFromTheTypedFlag) {
  traces::RunDescriptor run;
  run.mesh = {.dp = 1, .pp = 8, .tp = 8};
  EXPECT_EQ(replicas_note(run, 8), "");
  run.replicas_simulated_once = true;
  EXPECT_EQ(replicas_note(run, 8),
            "the run's mesh is dp=1 x pp=8 x tp=8: replicas simulated once: devices stand for "
            "their dp x tp replicas");
  EXPECT_EQ(replicas_note(run, 64), "");  // every rank shown: nothing to say
}

TEST(MeshViewScale, StripDevicesAreAllShownWhenTheyFitElseEvenlySampled) {
  EXPECT_EQ(strip_devices(3, 46), (std::vector<size_t>{0, 1, 2}));
  const std::vector<size_t> s = strip_devices(65535, 46);
  ASSERT_EQ(s.size(), 46u);
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s.back(), 65534u);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_GT(s[i], s[i - 1]);
  EXPECT_EQ(strip_devices(5, 0), (std::vector<size_t>{0}));
}

TEST(MeshViewScale, VerticesDoNotGrowWithTheDeviceCount) {
  const int few = mesh_frame_vertices(4, 1);
  const int many = mesh_frame_vertices(64, 16);  // 1,024 devices
  // A lane per device would draw 1,024 x 800 strip rectangles (3.3 M vertices) alone.
  EXPECT_LT(many, 600'000) << "few devices: " << few;
}

TEST(MeshViewScale, SixtyFiveThousandDevicesDrawInBoundedTimeAndVertices) {
  const auto t0 = std::chrono::steady_clock::now();
  const int vertices = mesh_frame_vertices(257, 255);  // 65,535 devices, the Timeline's limit
  EXPECT_LT(vertices, 2'000'000);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
}

}  // namespace
}  // namespace meshscope::gui
