// Turning a Timeline or a trace file into a Run.
#include "gui/app/run.h"

#include <stdexcept>

#include "traces/import/load_trace.h"

namespace meshscope::gui {

namespace {
// Number of idle gaps the stats panel lists.
constexpr size_t kListedGaps = 20;
}  // namespace

int64_t Run::begin_ns() const {
  return analysis.windows.empty() ? timeline.extent().begin_ns : analysis.windows.front().begin_ns;
}

int64_t Run::end_ns() const {
  return analysis.windows.empty() ? timeline.extent().end_ns : analysis.windows.back().end_ns;
}

std::unique_ptr<Run> make_run(traces::Timeline t, std::string label) {
  auto run = std::make_unique<Run>();
  run->label = std::move(label);
  run->timeline = std::move(t);
  traces::Timeline& tl = run->timeline;
  traces::add_idle_spans(tl);
  tl.sort_spans();
  run->index = std::make_unique<TrackIndex>(tl);
  run->analysis = traces::analyze(tl);
  run->stats = build_stats(tl, run->analysis, kListedGaps);
  run->grid = mesh_grid_of(tl);
  run->mesh_devices = mesh_devices(tl);
  return run;
}

std::unique_ptr<Run> load_run(const std::filesystem::path& path,
                              const traces::ImportOptions& options) {
  traces::ImportReport report;
  const std::filesystem::path paths[] = {path};
  traces::Timeline t = traces::load_trace_paths(paths, options, &report);
  try {
    traces::require_spans(t, path, &report);
  } catch (const traces::ImportError& e) {
    // Nothing is drawn, so no warning banner says what was skipped: the error does.
    std::string why = e.what();
    const std::vector<std::string> skipped = report.lines();
    for (size_t i = 0; i < skipped.size(); ++i) why += (i == 0 ? "; skipped: " : "; ") + skipped[i];
    throw std::runtime_error(why);
  }
  std::unique_ptr<Run> run = make_run(std::move(t), path.filename().string());
  for (const std::string& line : report.lines()) run->import_warnings.push_back(line);
  return run;
}

}  // namespace meshscope::gui
