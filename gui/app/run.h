// A loaded run: the Timeline with its idle spans derived, sorted, indexed and analysed, ready for
// every view. Runs never move once made (the index points into the Timeline), so they live in
// unique_ptrs.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gui/view/mesh_layout.h"
#include "gui/view/stats_model.h"
#include "gui/view/track_index.h"
#include "traces/analysis.h"
#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::gui {

struct Run {
  std::string label;  // file name, or what made it ("synthetic 1f1b ...", "what-if ...")
  traces::Timeline timeline;
  std::unique_ptr<TrackIndex> index;
  traces::TimelineAnalysis analysis;
  StatsModel stats;
  MeshGrid grid;
  std::vector<uint16_t> mesh_devices;  // the devices the mesh view shows (no host-only ones)
  // What the importer warned of (traces::ImportReport::lines(), e.g. a rank whose steps lie apart
  // from the others'): the viewer says it, as `analyze` does.
  std::vector<std::string> import_warnings;

  // The bounds views start from: the step windows if any, else the span extent.
  int64_t begin_ns() const;
  int64_t end_ns() const;
};

// Derives the idle spans (traces::add_idle_spans), sorts, indexes and analyses `t`.
std::unique_ptr<Run> make_run(traces::Timeline t, std::string label);

// Opens a trace file (Chrome JSON, .json.gz, Nsight SQLite: whatever traces/import reads) or a
// folder of per-rank files as one run. Throws std::runtime_error naming the file and, for
// malformed input, the byte offset.
std::unique_ptr<Run> load_run(const std::filesystem::path& path,
                              const traces::ImportOptions& options = {});

}  // namespace meshscope::gui
