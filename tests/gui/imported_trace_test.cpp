// The views' models on a real imported Kineto trace (rank 0 of a 2-rank A100 NCCL run,
// tests/fixtures): the host process is no device of the mesh or the stats, the GPU rows come
// first and the host rows start collapsed.
#include <gtest/gtest.h>

#include <filesystem>

#include "gui/view/mesh_layout.h"
#include "gui/view/row_layout.h"
#include "gui/view/stats_model.h"
#include "traces/analysis.h"
#include "traces/import/load_trace.h"

namespace meshscope::gui {
namespace {

using traces::LaneKind;

traces::Timeline fixture() {
  traces::Timeline t = traces::load_trace(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                          "tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz");
  traces::add_idle_spans(t);
  t.sort_spans();
  return t;
}

uint16_t the_gpu(const traces::Timeline& t) {
  for (uint16_t d = 0; d < t.devices.size(); ++d) {
    if (!traces::is_host_only(t.devices[d])) return d;
  }
  ADD_FAILURE() << "no GPU device in the fixture";
  return 0;
}

TEST(ImportedTrace, TheHostIsNoDeviceOfTheMeshOrTheStats) {
  const traces::Timeline t = fixture();
  ASSERT_EQ(t.devices.size(), 2u);  // "rank 0 · GPU 0" and "rank 0 · host"
  const uint16_t gpu = the_gpu(t);
  EXPECT_EQ(mesh_devices(t), std::vector<uint16_t>{gpu});
  const MeshGrid grid = mesh_grid_of(t);
  EXPECT_EQ(grid.pp * grid.dp * grid.tp, 1);
  const std::vector<MeshCell> cells = layout_mesh(t, grid, 1200, 500, 6);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].device, gpu);

  const StatsModel m = build_stats(t, traces::analyze(t), 20);
  ASSERT_EQ(m.bars.size(), 1u);
  EXPECT_EQ(m.bars[0].device, gpu);
  EXPECT_EQ(m.host_devices, 1u);
}

// A collective's flow from the host is its launch: the mesh cell named "rank 0 · host" as the
// collective's peer.
TEST(ImportedTrace, AHostLaunchIsNoPeerOfACollective) {
  const traces::Timeline t = fixture();
  const TrackIndex index(t);
  const uint16_t gpu = the_gpu(t);
  size_t collectives = 0;
  for (const traces::Span& s : t.spans) {
    if (s.device != gpu || s.kind != traces::SpanKind::kCollective) continue;
    const DeviceState st = device_state_at(t, index, gpu, s.begin_ns + s.duration_ns() / 2);
    if (!st.comm) continue;
    ++collectives;
    if (st.peer_device) {
      EXPECT_FALSE(traces::is_host_only(t.devices[*st.peer_device]));
    }
  }
  EXPECT_GT(collectives, 10u);
}

TEST(ImportedTrace, GpuRowsComeFirstAndHostRowsStartCollapsed) {
  const traces::Timeline t = fixture();
  const TrackIndex index(t);
  const uint16_t gpu = the_gpu(t);
  const std::vector<bool> collapsed = collapsed_by_default(t);
  const std::vector<uint16_t> order = device_display_order(t);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], gpu);
  EXPECT_FALSE(collapsed[gpu]);
  EXPECT_TRUE(collapsed[1 - gpu]);
  const RowLayoutOptions o;
  const RowLayout layout(index, t.devices.size(), o, collapsed, order);
  const size_t gpu_rows = index.device_rows(gpu).size();
  // Two headers, the GPU's rows and two gaps: the 15 host rows take no height.
  EXPECT_FLOAT_EQ(layout.total_px(), 2 * o.header_px + gpu_rows * o.row_px + 2 * o.gap_px);
  EXPECT_FLOAT_EQ(layout.device_top(gpu), 0);
  for (size_t pos = 0; pos < index.rows().size(); ++pos) {
    const size_t r = layout.row_at(pos);
    EXPECT_EQ(layout.row_shown(r), index.rows()[r].device == gpu);
  }
}

TEST(ImportedTrace, DisplayOrderPutsEveryHostAfterEveryDevice) {
  // A merged two-rank folder: each rank's GPU and its host process, interleaved by rank.
  traces::Timeline t;
  for (int r = 0; r < 2; ++r) {
    const uint16_t host = t.add_device(r, "rank " + std::to_string(r) + " · host");
    t.add_lane(host, "thread 1 (pt_main_thread)", LaneKind::kHost);
    const uint16_t gpu = t.add_device(r, "rank " + std::to_string(r) + " · GPU 0");
    t.add_lane(gpu, "stream 7", LaneKind::kCompute);
  }
  EXPECT_EQ(device_display_order(t), (std::vector<uint16_t>{1, 3, 0, 2}));
  EXPECT_EQ(collapsed_by_default(t), (std::vector<bool>{true, false, true, false}));
  // Host threads alone (a CPU-only trace): nothing to collapse them for.
  traces::Timeline cpu;
  cpu.add_lane(cpu.add_device(0, "host"), "thread 1", LaneKind::kHost);
  EXPECT_EQ(collapsed_by_default(cpu), std::vector<bool>{false});
  EXPECT_EQ(mesh_devices(cpu), std::vector<uint16_t>{0});
}

}  // namespace
}  // namespace meshscope::gui
