// Mesh grid geometry and per-device activity at an instant.
#include "gui/view/mesh_layout.h"

#include <algorithm>

#include "gui/view/lod.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

using traces::Span;
using traces::SpanKind;
using traces::Timeline;

bool has_coord(const traces::MeshCoord& c) { return c.dp >= 0 && c.pp >= 0 && c.tp >= 0; }

}  // namespace

std::vector<uint16_t> mesh_devices(const Timeline& t) {
  std::vector<uint16_t> out;
  for (size_t d = 0; d < t.devices.size(); ++d) {
    if (!traces::is_host_only(t.devices[d])) out.push_back(static_cast<uint16_t>(d));
  }
  if (out.empty()) {
    for (size_t d = 0; d < t.devices.size(); ++d) out.push_back(static_cast<uint16_t>(d));
  }
  return out;
}

MeshGrid mesh_grid_of(const Timeline& t) {
  MeshGrid g;
  bool any = false;
  const std::vector<uint16_t> shown = mesh_devices(t);
  for (const uint16_t i : shown) {
    const auto& d = t.devices[i];
    if (!has_coord(d.coord)) {
      return MeshGrid{1, std::max<int>(1, static_cast<int>(shown.size())), 1, false};
    }
    any = true;
    g.dp = std::max(g.dp, d.coord.dp + 1);
    g.pp = std::max(g.pp, d.coord.pp + 1);
    g.tp = std::max(g.tp, d.coord.tp + 1);
  }
  if (!any) g.from_coords = false;
  return g;
}

namespace {

// Devices without coordinates, in device order, row by row: as many columns as give the largest
// cells (no taller than wide), so 64 GPUs make an 8 x 8 block, not a row of slivers.
std::vector<MeshCell> layout_in_order(std::vector<uint16_t> shown, float width_px, float height_px,
                                      float gap_px) {
  // Past the cells drawn, the first kMaxMeshCells get the room (the view says how many it shows).
  if (shown.size() > kMaxMeshCells) shown.resize(kMaxMeshCells);
  const int n = std::max<int>(1, static_cast<int>(shown.size()));
  int best_cols = n;
  float best_w = 0, best_h = 0;
  for (int cols = 1; cols <= n; ++cols) {
    const int rows = (n + cols - 1) / cols;
    const float w = (width_px - gap_px * static_cast<float>(cols - 1)) / static_cast<float>(cols);
    const float h =
        std::min(w, (height_px - gap_px * static_cast<float>(rows - 1)) / static_cast<float>(rows));
    if (w < 1) break;
    if (h > best_h) {
      best_cols = cols;
      best_w = w;
      best_h = h;
    }
  }
  best_w = std::max(best_w, 1.0f);
  best_h = std::max(best_h, 1.0f);
  std::vector<MeshCell> cells;
  cells.reserve(shown.size());
  for (size_t k = 0; k < shown.size(); ++k) {
    const auto col = static_cast<float>(static_cast<int>(k) % best_cols);
    const auto row = static_cast<float>(static_cast<int>(k) / best_cols);
    cells.push_back({col * (best_w + gap_px), row * (best_h + gap_px), best_w, best_h, shown[k]});
  }
  return cells;
}

}  // namespace

std::vector<MeshCell> layout_mesh(const Timeline& t, const MeshGrid& grid, float width_px,
                                  float height_px, float gap_px) {
  if (!grid.from_coords) return layout_in_order(mesh_devices(t), width_px, height_px, gap_px);
  // dp blocks are separated by three gaps so replicas read as groups.
  const float block_gap = 3 * gap_px;
  const int rows = grid.dp * grid.tp;
  const float cell_w = std::max(
      1.0f, (width_px - gap_px * static_cast<float>(grid.pp - 1)) / static_cast<float>(grid.pp));
  const float spare_h = height_px - gap_px * static_cast<float>(rows - grid.dp) -
                        block_gap * static_cast<float>(grid.dp - 1);
  // Cells no taller than wide (a few devices would otherwise become tall stripes).
  const float cell_h = std::max(1.0f, std::min(spare_h / static_cast<float>(rows), cell_w));
  std::vector<MeshCell> cells;
  const std::vector<uint16_t> shown = mesh_devices(t);
  cells.reserve(shown.size());
  for (size_t k = 0; k < shown.size(); ++k) {
    const uint16_t i = shown[k];
    const traces::MeshCoord c = t.devices[i].coord;
    MeshCell cell;
    cell.device = i;
    cell.w = cell_w;
    cell.h = cell_h;
    cell.x = static_cast<float>(c.pp) * (cell_w + gap_px);
    cell.y = static_cast<float>(c.dp) *
                 (static_cast<float>(grid.tp) * (cell_h + gap_px) - gap_px + block_gap) +
             static_cast<float>(c.tp) * (cell_h + gap_px);
    cells.push_back(cell);
  }
  return cells;
}

std::vector<size_t> strip_devices(size_t devices, size_t lanes_px) {
  const size_t lanes = std::min(devices, std::max<size_t>(lanes_px, 1));
  std::vector<size_t> out(lanes);
  for (size_t l = 0; l < lanes; ++l) {
    out[l] = lanes == 1 ? 0 : l * (devices - 1) / (lanes - 1);
  }
  return out;
}

Activity DeviceState::activity(const Timeline& t) const {
  if (compute) return activity_of(t.spans[*compute]);
  if (comm) return activity_of(t.spans[*comm]);
  return Activity::kIdle;
}

DeviceState device_state_at(const Timeline& t, const TrackIndex& index, uint16_t device,
                            int64_t t_ns) {
  DeviceState state;
  const bool host_only = traces::is_host_only(t.devices[device]);
  for (const Row& row : index.device_rows(device)) {
    const size_t i = first_ending_after(t, row, t_ns);
    if (i >= row.size()) continue;
    const uint32_t id = row.span_at(i);
    const Span& s = t.spans[id];
    if (s.begin_ns > t_ns) continue;
    // Rows come outermost first, so a later match is the innermost span.
    if (s.kind == SpanKind::kCompute || (host_only && s.kind == SpanKind::kHost)) {
      state.compute = id;
    } else if (s.kind == SpanKind::kAnnotation && s.stage >= 0 && !state.action) {
      state.action = id;  // the outermost: the action's own range, not an op labelled inside it
    } else if (traces::is_communication(s.kind)) {
      state.comm = id;
    } else if (s.kind == SpanKind::kIdle) {
      // An idle span inside a compute span (a tp rank waiting in its layer for the all-reduce's
      // other members): the device waits there, as the analysis and the timeline count it.
      state.compute.reset();
    }
  }
  if (state.comm) {
    if (auto f = index.flow_from(*state.comm)) {
      state.peer_device = t.spans[t.flows[*f].to].device;
    } else if (auto g = index.flow_to(*state.comm)) {
      state.peer_device = t.spans[t.flows[*g].from].device;
    }
    // A flow from the host is the launch of the collective, not a peer of the transfer.
    if (state.peer_device && traces::is_host_only(t.devices[*state.peer_device])) {
      state.peer_device.reset();
    }
  }
  return state;
}

}  // namespace meshscope::gui
