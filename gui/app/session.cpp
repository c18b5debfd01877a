// Session bookkeeping.
#include "gui/app/session.h"

namespace meshscope::gui {

std::optional<ViewKind> parse_view(std::string_view s) {
  for (size_t i = 0; i < kViewNames.size(); ++i) {
    if (kViewNames[i] == s) return static_cast<ViewKind>(i);
  }
  return std::nullopt;
}

void Session::add_run(std::unique_ptr<Run> run) {
  runs.push_back(std::move(run));
  primary = runs.size() - 1;
  if (runs.size() == 2) {
    compare_a = 0;
    compare_b = 1;
  }
  const Run& r = *runs[primary];
  const int64_t step_end =
      r.analysis.windows.empty() ? r.end_ns() : r.analysis.windows.front().end_ns;
  playhead.set_range(r.begin_ns(), step_end);
}

}  // namespace meshscope::gui
