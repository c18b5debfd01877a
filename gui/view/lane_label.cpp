// Shortening lane names for the timeline's label column.
#include "gui/view/lane_label.h"

#include <algorithm>

namespace meshscope::gui {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "thread 2910249 (pt_main_thread)" -> {"pt_main_thread", "2910249"}; else {name, ""}.
std::pair<std::string_view, std::string_view> thread_parts(std::string_view name) {
  constexpr std::string_view kThread = "thread ";
  if (!name.starts_with(kThread) || !name.ends_with(')')) return {name, {}};
  const size_t open = name.find(" (");
  if (open == std::string_view::npos || open < kThread.size()) return {name, {}};
  return {name.substr(open + 2, name.size() - open - 3),
          name.substr(kThread.size(), open - kThread.size())};
}

}  // namespace

std::string fit_lane_label(std::string_view lane_name, int depth, float max_px,
                           const TextWidth& width, int deepest) {
  const std::string_view name = trim(lane_name);
  const std::string suffix = depth > 0 ? " +" + std::to_string(depth) : "";
  // The form is the one the lane's widest suffix fits; each band then shows its own suffix.
  const int widest = std::max(depth, deepest);
  const std::string form_suffix = widest > 0 ? " +" + std::to_string(widest) : "";
  const auto fits = [&](const std::string& base) { return width(base + form_suffix) <= max_px; };
  const auto [thread, tid] = thread_parts(name);
  if (fits(std::string(name))) return std::string(name) + suffix;
  // `keep` characters of the name: its head and tail around "..", the tail telling
  // pt_autograd_0 from pt_autograd_1.
  auto shortened = [&](size_t keep) {
    if (keep + 2 >= thread.size()) return std::string(thread);
    const size_t tail = std::max<size_t>(1, keep / 3), head = keep - tail;
    return std::string(thread.substr(0, head)) + ".." +
           std::string(thread.substr(thread.size() - tail));
  };
  // The thread id keeps two threads of the same name apart: kept while the name can keep at
  // least 4 characters beside it.
  if (!tid.empty()) {
    const std::string id = " " + std::string(tid);
    for (size_t keep = thread.size(); keep >= 4; --keep) {
      const std::string c = shortened(keep) + id;
      if (fits(c)) return c + suffix;
    }
  }
  for (size_t keep = thread.size(); keep >= 1; --keep) {
    const std::string c = shortened(keep);
    if (fits(c)) return c + suffix;
  }
  return suffix.empty() ? std::string(thread.substr(0, 1)) : suffix.substr(1);
}

}  // namespace meshscope::gui
