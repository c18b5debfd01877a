// The viewer's window contents: a top bar (runs, open a file, errors) and one tab per view
// (timeline, mesh replay, stats, compare, what-if). Called once per ImGui frame by main's loop,
// by --screenshot and by --bench alike.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gui/app/compare_view.h"
#include "gui/app/mesh_view.h"
#include "gui/app/session.h"
#include "gui/app/stats_view.h"
#include "gui/app/timeline_view.h"
#include "gui/app/whatif_view.h"

namespace meshscope::gui {

class App {
 public:
  explicit App(std::optional<Predictor> predictor = std::nullopt);

  Session& session() { return session_; }
  // Opens a trace and makes it the shown run; on failure the message goes to the session's
  // errors (shown in the window) and false is returned.
  bool open(const std::filesystem::path& path);
  // Files or folders dropped on the window (what the window loop hands over each frame): each
  // opens as its own run, in order, as on the command line; a folder opens as one multi-rank run.
  // Returns how many opened; the others' errors go to the session's errors.
  size_t open_dropped(const std::vector<std::string>& paths);
  void set_view(ViewKind v) { session_.switch_to = v; }
  // How the traces opened from now on are read (--rank-from file-order numbers a folder's files
  // by their order, as `meshscope analyze` does).
  void set_import_options(const traces::ImportOptions& o) { import_options_ = o; }
  ViewKind view() const { return view_; }

  // Builds the whole window for this frame; `delta_s` advances the replay playhead.
  void frame(float delta_s);
  // True while the what-if view waits for the simulator.
  bool busy() const { return whatif_.busy(); }

  TimelineView& timeline() { return timeline_; }
  const CompareView& compare() const { return compare_; }
  const MeshView& mesh() const { return mesh_; }
  const WhatIfView& whatif() const { return whatif_; }

 private:
  void draw_top_bar();
  void draw_errors();

  Session session_;
  ViewKind view_ = ViewKind::kTimeline;
  TimelineView timeline_;
  MeshView mesh_;
  StatsView stats_;
  CompareView compare_;
  WhatIfView whatif_;
  char open_path_[1024] = "";
  traces::ImportOptions import_options_;
};

}  // namespace meshscope::gui
