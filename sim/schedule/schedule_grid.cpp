// format_grid(): picks the columns and row windows to show, then lays out a fixed-width table.
#include "sim/schedule/schedule_grid.h"

#include <algorithm>
#include <set>

namespace meshscope::schedule {
namespace {

std::vector<int> pick_ranks(int num_ranks, const std::vector<GridMark>& marks, int max_ranks) {
  std::set<int> chosen;
  if (num_ranks <= max_ranks) {
    for (int r = 0; r < num_ranks; ++r) chosen.insert(r);
  } else {
    for (const GridMark& m : marks) {
      if (static_cast<int>(chosen.size()) < max_ranks) chosen.insert(m.rank);
    }
    // Grow around the marked ranks (or from rank 0) until the table is full.
    const std::vector<int> seeds =
        chosen.empty() ? std::vector<int>{0} : std::vector<int>(chosen.begin(), chosen.end());
    for (int d = 0; static_cast<int>(chosen.size()) < max_ranks && d < num_ranks; ++d) {
      for (int seed : seeds) {
        for (int r : {seed - d, seed + d}) {
          if (r >= 0 && r < num_ranks && static_cast<int>(chosen.size()) < max_ranks) {
            chosen.insert(r);
          }
        }
      }
    }
  }
  return {chosen.begin(), chosen.end()};
}

// Inclusive [first, last] row windows, merged.
std::vector<std::pair<int, int>> pick_rows(int num_rows, const std::vector<GridMark>& marks,
                                           int context) {
  std::vector<std::pair<int, int>> windows;
  if (marks.empty()) {
    if (num_rows > 0) windows.push_back({0, num_rows - 1});
    return windows;
  }
  for (const GridMark& m : marks) {
    windows.push_back({std::max(0, m.step - context), std::min(num_rows - 1, m.step + context)});
  }
  std::sort(windows.begin(), windows.end());
  std::vector<std::pair<int, int>> merged;
  for (const auto& w : windows) {
    if (!merged.empty() && w.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, w.second);
    } else {
      merged.push_back(w);
    }
  }
  return merged;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string format_grid(const Schedule& s, const std::vector<GridMark>& marks, int context,
                        int max_ranks) {
  const int num_ranks = static_cast<int>(s.ranks.size());
  const std::vector<int> ranks = pick_ranks(num_ranks, marks, std::max(1, max_ranks));
  int num_rows = 0;
  for (int r : ranks) num_rows = std::max(num_rows, static_cast<int>(s.ranks[r].size()));
  for (const GridMark& m : marks) num_rows = std::max(num_rows, m.step + 1);
  const std::vector<std::pair<int, int>> rows = pick_rows(num_rows, marks, std::max(0, context));
  const auto marked = [&](int rank, int step) {
    return std::find(marks.begin(), marks.end(), GridMark{rank, step}) != marks.end();
  };
  const auto cell = [&](int rank, int step) {
    const auto& program = s.ranks[rank];
    std::string text = step < static_cast<int>(program.size()) ? to_string(program[step])
                       : marked(rank, step)                    ? "end"
                                                               : "";
    return marked(rank, step) ? "[" + text + "]" : text;
  };
  std::vector<size_t> widths;
  for (int r : ranks) {
    size_t w = ("rank " + std::to_string(r)).size();
    for (const auto& [first, last] : rows) {
      for (int i = first; i <= last; ++i) w = std::max(w, cell(r, i).size());
    }
    widths.push_back(w);
  }
  const size_t step_width = std::max<size_t>(4, std::to_string(std::max(0, num_rows - 1)).size());
  std::string out;
  if (static_cast<int>(ranks.size()) < num_ranks) {
    out +=
        "(" + std::to_string(ranks.size()) + " of " + std::to_string(num_ranks) + " ranks shown)\n";
  }
  out += "   " + pad_left("step", step_width);
  for (size_t c = 0; c < ranks.size(); ++c) {
    out += " | " + pad("rank " + std::to_string(ranks[c]), widths[c]);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += '\n';
  int previous_last = -1;
  for (const auto& [first, last] : rows) {
    if (first > previous_last + 1) out += "   " + pad_left("...", step_width) + '\n';
    for (int i = first; i <= last; ++i) {
      bool flagged = false;
      std::string line;
      for (size_t c = 0; c < ranks.size(); ++c) {
        flagged = flagged || marked(ranks[c], i);
        line += " | " + pad(cell(ranks[c], i), widths[c]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += (flagged ? "=> " : "   ") + pad_left(std::to_string(i), step_width) + line + '\n';
    }
    previous_last = last;
  }
  if (previous_last < num_rows - 1) out += "   " + pad_left("...", step_width) + '\n';
  return out;
}

}  // namespace meshscope::schedule
