// The replay view: a playhead that plays a step at a chosen speed, and the device mesh laid out
// as dp x pp x tp where each cell shows what its device does at the playhead (computing
// microbatch k, sending to / receiving from a peer, all-reducing, or in a bubble), so bubbles
// visibly travel through the pipeline.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gui/app/session.h"
#include "gui/view/activity.h"
#include "gui/view/mesh_layout.h"
#include "traces/run_descriptor.h"

namespace meshscope::gui {

// The note under the mesh when the run's devices stand for replicas simulated once
// (RunDescriptor::replicas_simulated_once) and its mesh has more ranks than the `shown_cells`:
// "the run's mesh is dp=1 x pp=8 x tp=8: replicas simulated once: devices stand for their dp x tp
// replicas". Empty otherwise.
std::string replicas_note(const traces::RunDescriptor& run, int64_t shown_cells);

class MeshView {
 public:
  void draw(Session& session);

  // The cells of the last frame in screen coordinates (for the pixel tests).
  const std::vector<MeshCell>& last_cells() const { return cells_; }

 private:
  void draw_controls(Session& session, const Run& run);
  void draw_cells(Session& session, const Run& run, ImVec2 min, ImVec2 size);
  void draw_strip(Session& session, const Run& run, ImVec2 min, ImVec2 size);

  const Run* run_ = nullptr;
  int step_ = 0;
  // The strip's colours depend only on the run, the step range and the width: kept between
  // frames so playing costs one device lookup per cell, not per pixel column.
  struct StripKey {
    const Run* run = nullptr;
    int64_t begin_ns = 0, end_ns = 0;
    int columns = 0;
    bool operator==(const StripKey&) const = default;
  };
  StripKey strip_key_;
  std::vector<size_t> strip_lanes_;  // the device each strip lane shows (strip_devices)
  std::vector<Activity> strip_;      // lane-major, `columns` per lane
  std::vector<MeshCell> cells_;
};

// What a cell says: "F mb3 · stage 1", "SEND mb3 -> rank 2", "bubble".
std::string cell_text(const traces::Timeline& t, const DeviceState& state);

}  // namespace meshscope::gui
