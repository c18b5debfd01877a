// The step x rank grid: every row without marks; around marks only, with marked cells bracketed,
// flagged rows, elided gaps, and a column subset for wide meshes.
#include "sim/schedule/schedule_grid.h"

#include <gtest/gtest.h>

#include "sim/schedule/schedule_text.h"

namespace meshscope::schedule {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

TEST(ScheduleGrid, ShowsEveryRowWithoutMarks) {
  const Schedule s =
      load("mesh pp=2\nmicrobatches 1\nrank 0: 0F0 0SEND_F0@1\nrank 1: 1RECV_F0@0\n");
  const std::vector<std::string> expected = {
      "   step | rank 0     | rank 1",
      "      0 | 0F0        | 1RECV_F0@0",
      "      1 | 0SEND_F0@1 |",
  };
  EXPECT_EQ(lines(format_grid(s)), expected);
}

TEST(ScheduleGrid, ShowsContextAroundMarksOnly) {
  std::string program;
  for (int mb = 0; mb < 30; ++mb) program += " 0F" + std::to_string(mb);
  const Schedule s = load("mesh pp=1\nmicrobatches 30\nrank 0:" + program + "\n");
  const std::vector<std::string> grid = lines(format_grid(s, {{0, 10}, {0, 25}}, 1));
  const std::vector<std::string> expected = {
      "   step | rank 0", "    ...", "      9 | 0F9",  "=>   10 | [0F10]",
      "     11 | 0F11",   "    ...", "     24 | 0F24", "=>   25 | [0F25]",
      "     26 | 0F26",   "    ...",
  };
  EXPECT_EQ(grid, expected);
  // A mark past the last action points at the end of the program.
  EXPECT_NE(format_grid(s, {{0, 30}}, 0).find("=>   30 | [end]"), std::string::npos);
}

TEST(ScheduleGrid, PicksMarkedRanksAndNeighboursOnWideMeshes) {
  std::string text = "mesh dp=40\nmicrobatches 1\n";
  for (int r = 0; r < 40; ++r) text += "rank " + std::to_string(r) + ": 0F0\n";
  const std::string grid = format_grid(load(text), {{33, 0}}, 2, 3);
  EXPECT_NE(grid.find("(3 of 40 ranks shown)"), std::string::npos) << grid;
  EXPECT_NE(grid.find("| rank 32 | rank 33 | rank 34"), std::string::npos) << grid;
  EXPECT_EQ(grid.find("rank 0 "), std::string::npos) << grid;
}

}  // namespace
}  // namespace meshscope::schedule
