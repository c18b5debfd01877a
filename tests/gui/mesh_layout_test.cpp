#include "gui/view/mesh_layout.h"

#include <gtest/gtest.h>

#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

using traces::Phase;
using traces::Span;
using traces::SpanKind;
using traces::Timeline;

// The devices of a dp x pp x tp mesh, as the synthetic pipeline lays them out, with no spans.
Timeline mesh_of(int dp, int pp, int tp) {
  Timeline t;
  add_mesh_devices(t, dp, pp, tp);
  return t;
}

TEST(MeshLayout, GridComesFromTheDeviceCoordinates) {
  const MeshGrid g = mesh_grid_of(mesh_of(2, 4, 2));
  EXPECT_EQ(g.dp, 2);
  EXPECT_EQ(g.pp, 4);
  EXPECT_EQ(g.tp, 2);
  EXPECT_TRUE(g.from_coords);
}

TEST(MeshLayout, DevicesWithoutCoordinatesFormOnePipelineRow) {
  Timeline t;
  t.add_device(0, "GPU 0");
  t.add_device(1, "GPU 1");
  t.add_device(2, "GPU 2");
  const MeshGrid g = mesh_grid_of(t);
  EXPECT_FALSE(g.from_coords);
  EXPECT_EQ(g.pp, 3);
  const auto cells = layout_mesh(t, g, 320, 100, 10);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_FLOAT_EQ(cells[2].x, 2 * (100 + 10));
  EXPECT_FLOAT_EQ(cells[2].y, 0);
}

// 16 or 64 GPUs of an imported trace (no coordinates) had been one row of slivers, 10,000 a
// dotted line of 1-pixel cells: in device order, row by row, in the columns that make the cells
// largest, never taller than wide, none overlapping, all inside the panel (the first
// kMaxMeshCells of more).
TEST(MeshLayout, DevicesWithoutCoordinatesWrapIntoRows) {
  for (const int n : {16, 64, 10000}) {
    Timeline t;
    for (int d = 0; d < n; ++d) t.add_device(d, "GPU " + std::to_string(d));
    const auto cells = layout_mesh(t, mesh_grid_of(t), 1260, 500, 6);
    ASSERT_EQ(cells.size(), std::min<size_t>(static_cast<size_t>(n), kMaxMeshCells));
    EXPECT_GT(cells[0].h, 500.0f / static_cast<float>(n) - 6) << n;  // far past one row's share
    if (n == 16) {
      EXPECT_GT(cells[0].w, 150);  // about 8 x 2 of 150 px, not 16 of 73
    }
    for (size_t k = 0; k < cells.size(); ++k) {
      EXPECT_EQ(cells[k].device, k);
      EXPECT_LE(cells[k].h, cells[k].w);
      EXPECT_LE(cells[k].x + cells[k].w, 1260.01f);
      EXPECT_LE(cells[k].y + cells[k].h, 500.01f);
      if (k > 0) {  // device order: right of the one before, or on a lower row
        EXPECT_TRUE(cells[k].x > cells[k - 1].x || cells[k].y >= cells[k - 1].y + cells[k - 1].h)
            << n << " " << k;
      }
    }
  }
}

TEST(MeshLayout, StagesGoRightTpStacksAndReplicasAreBlocksBelow) {
  const Timeline t = mesh_of(2, 3, 2);
  const auto cells = layout_mesh(t, mesh_grid_of(t), 300, 400, 10);
  ASSERT_EQ(cells.size(), 12u);
  auto cell = [&](int dp, int pp, int tp) {
    return cells[static_cast<size_t>((dp * 3 + pp) * 2 + tp)];
  };
  // Widths: (300 - 2 gaps) / 3; heights: (400 - 2 tp gaps - 1 block gap of 30) / 4.
  EXPECT_FLOAT_EQ(cell(0, 0, 0).w, 280.0f / 3);
  EXPECT_FLOAT_EQ(cell(0, 0, 0).h, 350.0f / 4);
  EXPECT_GT(cell(0, 1, 0).x, cell(0, 0, 0).x + cell(0, 0, 0).w);
  EXPECT_FLOAT_EQ(cell(0, 1, 0).y, cell(0, 0, 0).y);
  EXPECT_FLOAT_EQ(cell(0, 0, 1).y, cell(0, 0, 0).h + 10);
  EXPECT_FLOAT_EQ(cell(1, 0, 0).y, 2 * (cell(0, 0, 0).h + 10) - 10 + 30);
  // No two cells overlap and all fit in the panel.
  for (const MeshCell& a : cells) {
    EXPECT_LE(a.x + a.w, 300.01f);
    EXPECT_LE(a.y + a.h, 400.01f);
    for (const MeshCell& b : cells) {
      if (a.device == b.device) continue;
      const bool apart =
          a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
      EXPECT_TRUE(apart) << a.device << " " << b.device;
    }
  }
}

TEST(MeshLayout, CellsAreNeverTallerThanWide) {
  const Timeline t = mesh_of(1, 2, 1);
  const auto cells = layout_mesh(t, mesh_grid_of(t), 410, 1000, 10);
  EXPECT_FLOAT_EQ(cells[0].w, 200);
  EXPECT_FLOAT_EQ(cells[0].h, 200);
}

TEST(DeviceState, ReportsComputeCommPeerAndIdleAtAnInstant) {
  Timeline t = mesh_of(1, 2, 1);
  auto add = [&](uint16_t dev, uint16_t lane, int64_t b, int64_t e, SpanKind k, Phase p, int mb) {
    Span s;
    s.device = dev;
    s.lane = lane;
    s.begin_ns = b;
    s.end_ns = e;
    s.kind = k;
    s.phase = p;
    s.microbatch = mb;
    return t.add_span(s);
  };
  add(0, 0, 0, 100, SpanKind::kCompute, Phase::kForward, 0);
  const uint32_t send = add(0, 1, 100, 120, SpanKind::kSend, Phase::kNone, 0);
  add(0, 0, 100, 200, SpanKind::kCompute, Phase::kForward, 1);
  const uint32_t recv = add(1, 1, 100, 120, SpanKind::kRecv, Phase::kNone, 0);
  add(1, 0, 120, 220, SpanKind::kCompute, Phase::kForward, 0);
  add(1, 0, 0, 120, SpanKind::kIdle, Phase::kNone, -1);
  t.add_flow(send, recv);
  t.sort_spans();
  const TrackIndex index(t);

  DeviceState s0 = device_state_at(t, index, 0, 110);
  ASSERT_TRUE(s0.compute && s0.comm);
  EXPECT_EQ(t.spans[*s0.compute].microbatch, 1);
  EXPECT_EQ(t.spans[*s0.comm].kind, SpanKind::kSend);
  EXPECT_EQ(s0.peer_device, 1);
  EXPECT_EQ(s0.activity(t), Activity::kForward);

  DeviceState s1 = device_state_at(t, index, 1, 50);
  EXPECT_TRUE(s1.idle());  // an idle span is not activity
  EXPECT_EQ(s1.activity(t), Activity::kIdle);
  s1 = device_state_at(t, index, 1, 110);
  EXPECT_FALSE(s1.compute);
  ASSERT_TRUE(s1.comm);
  EXPECT_EQ(s1.activity(t), Activity::kRecv);
  EXPECT_EQ(s1.peer_device, 0);
  EXPECT_TRUE(device_state_at(t, index, 0, 250).idle());
  // Half-open spans: at 100 device 0 already computes microbatch 1.
  EXPECT_EQ(t.spans[*device_state_at(t, index, 0, 100).compute].microbatch, 1);
}

// A CPU trace of host threads only: its host work is what the device does (the cell said bubble
// beside a timeline of a busy op). A torch job's rank between the ops of an action: a bubble, as
// the analysis counts it, inside that action, as the timeline shows it.
TEST(DeviceState, HostWorkOfAHostOnlyTraceAndTheActionAroundAGap) {
  Timeline host_only;
  const uint16_t d = host_only.add_device(0, "pid 1");
  host_only.add_lane(d, "thread 1", traces::LaneKind::kHost);
  Span op;
  op.device = d;
  op.begin_ns = 0;
  op.end_ns = 100;
  op.kind = SpanKind::kHost;
  host_only.add_span(op);
  const TrackIndex host_index(host_only);
  const DeviceState busy = device_state_at(host_only, host_index, d, 50);
  ASSERT_TRUE(busy.compute);
  EXPECT_EQ(busy.activity(host_only), Activity::kHost);

  Timeline t = mesh_of(1, 1, 1);
  t.add_lane(0, "ops", traces::LaneKind::kCompute);
  Span action;  // "0F3 (inferred)", labelled
  action.begin_ns = 0;
  action.end_ns = 100;
  action.kind = SpanKind::kAnnotation;
  action.stage = 0;
  action.microbatch = 3;
  action.phase = Phase::kForward;
  t.add_span(action);
  Span inner = action;  // an op inside it, labelled alike, that is no compute either
  inner.begin_ns = 40;
  inner.end_ns = 60;
  t.add_span(inner);
  Span aten = action;
  aten.lane = 1;
  aten.kind = SpanKind::kCompute;
  aten.begin_ns = 10;
  aten.end_ns = 20;
  t.add_span(aten);
  t.sort_spans();
  const TrackIndex index(t);
  const DeviceState between = device_state_at(t, index, 0, 50);
  EXPECT_TRUE(between.idle());
  ASSERT_TRUE(between.action);
  EXPECT_EQ(t.spans[*between.action].end_ns - t.spans[*between.action].begin_ns, 100);  // outermost
  EXPECT_TRUE(device_state_at(t, index, 0, 15).compute);
}

// A tp rank waits inside its layer for the all-reduce's other members: an idle span nested in
// its compute span, which the analysis and the timeline count as a bubble. The mesh showed the
// compute phase there.
TEST(DeviceState, AnIdleSpanInsideAComputeSpanIsABubble) {
  Timeline t = mesh_of(1, 1, 2);
  Span f;
  f.device = 0;
  f.lane = 0;
  f.begin_ns = 0;
  f.end_ns = 100;
  f.kind = SpanKind::kCompute;
  f.phase = Phase::kForward;
  f.microbatch = 0;
  t.add_span(f);
  Span wait = f;
  wait.begin_ns = 40;
  wait.end_ns = 70;
  wait.kind = SpanKind::kIdle;
  wait.phase = Phase::kNone;
  wait.microbatch = -1;
  t.add_span(wait);
  t.sort_spans();
  const TrackIndex index(t);
  EXPECT_EQ(device_state_at(t, index, 0, 20).activity(t), Activity::kForward);
  EXPECT_TRUE(device_state_at(t, index, 0, 50).idle());
  EXPECT_EQ(device_state_at(t, index, 0, 50).activity(t), Activity::kIdle);
  EXPECT_EQ(device_state_at(t, index, 0, 80).activity(t), Activity::kForward);
}

}  // namespace
}  // namespace meshscope::gui
