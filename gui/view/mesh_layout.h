// The replay's mesh view: devices laid out as dp x pp x tp cells, and what each device does at
// the playhead (computes microbatch k, sends, receives, all-reduces, or sits in a bubble).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gui/view/activity.h"
#include "gui/view/track_index.h"
#include "traces/timeline.h"

namespace meshscope::gui {

// The devices the mesh shows: all but the host-only ones (an imported trace's CPU threads,
// traces::is_host_only), which are no device of the mesh and would sit there as an idle cell;
// all of them when every device is host-only (a CPU-only trace).
std::vector<uint16_t> mesh_devices(const traces::Timeline& t);

// The mesh shape the mesh devices' coordinates span. Devices without a full coordinate (imported
// traces) have none: dp = 1, pp = mesh devices, tp = 1, from_coords false, and layout_mesh lays
// them out in device order, row by row.
struct MeshGrid {
  int dp = 1;
  int pp = 1;
  int tp = 1;
  bool from_coords = true;  // false when the fallback above was used
};
MeshGrid mesh_grid_of(const traces::Timeline& t);

struct MeshCell {
  float x = 0, y = 0, w = 0, h = 0;  // pixels from the panel's top-left corner
  uint16_t device = 0;
};

// Pipeline stages run left to right (pp columns), tensor-parallel ranks stack inside a block
// (tp rows), data-parallel replicas are blocks one below the other with a wider gap. Cells fill
// the width and are at most as tall as they are wide. Without coordinates: device order, left to
// right and row by row, in the columns that make the cells largest.
std::vector<MeshCell> layout_mesh(const traces::Timeline& t, const MeshGrid& grid, float width_px,
                                  float height_px, float gap_px);

// The devices a strip of `lanes_px` pixel rows shows: all of them when they fit one per row, else
// every k-th (evenly spread, first and last included) so a 65,535-device trace costs as many
// lanes as the strip has pixel rows, not a lane per device (vertex buffers beyond 2 GiB).
std::vector<size_t> strip_devices(size_t devices, size_t lanes_px);

// At most this many mesh cells are drawn (about the number a screen can show legibly); beyond it
// the view says how many devices it left out.
inline constexpr size_t kMaxMeshCells = 4096;

// What a device does at one instant. Compute and communication can overlap (a comm lane beside
// the compute lane), so both are reported; neither means the device is idle. On a device that is
// host threads only (a CPU trace of no pipeline), its host work is its compute.
struct DeviceState {
  std::optional<uint32_t> compute;  // span computing at t (the innermost one)
  std::optional<uint32_t> comm;     // send, recv or collective at t
  std::optional<int> peer_device;   // the other end of the comm span's flow, if it has one
  // The pipeline action around t (the outermost labelled annotation: a torch job's action range,
  // "1F0" or "1F0 (inferred)"): its rank may sit between the ops of that action, a bubble to the
  // analysis, inside it to the eye.
  std::optional<uint32_t> action;
  bool idle() const { return !compute && !comm; }
  // What the cell shows: the compute phase, else the comm kind, else a bubble.
  Activity activity(const traces::Timeline& t) const;
};
DeviceState device_state_at(const traces::Timeline& t, const TrackIndex& index, uint16_t device,
                            int64_t t_ns);

}  // namespace meshscope::gui
