// What the views share: the loaded runs, which one is shown, the replay playhead, the errors to
// show, and requests one view makes of another (jump to a gap, switch tab).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gui/app/run.h"
#include "gui/view/playhead.h"

namespace meshscope::gui {

enum class ViewKind : uint8_t {
  kTimeline = 0,
  kMesh = 1,
  kStats = 2,
  kCompare = 3,
  kWhatIf = 4,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(ViewKind::kCount)> kViewNames = {
    "timeline", "mesh", "stats", "compare", "what-if"};
constexpr std::string_view name(ViewKind v) { return kViewNames[static_cast<size_t>(v)]; }
std::optional<ViewKind> parse_view(std::string_view s);

// Show [begin_ns, end_ns) of `device` in the timeline view.
struct JumpRequest {
  uint16_t device = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

struct Session {
  std::vector<std::unique_ptr<Run>> runs;
  size_t primary = 0;  // the run the timeline, mesh and stats views show
  size_t compare_a = 0;
  size_t compare_b = 1;
  Playhead playhead;  // over the primary run's step; the timeline draws it as a line
  bool show_playhead = false;
  std::vector<std::string> errors;    // shown in the window until dismissed
  std::vector<std::string> warnings;  // the same, for runs that opened with import warnings
  std::optional<ViewKind> switch_to;
  std::optional<JumpRequest> jump;

  Run* primary_run() { return primary < runs.size() ? runs[primary].get() : nullptr; }
  // Adds a run and makes it the primary one; the first two also become the compare pair.
  void add_run(std::unique_ptr<Run> run);
};

}  // namespace meshscope::gui
