// Lane labels on a real imported Kineto trace: they fit the label column, stay distinct per row
// and are never cut into a prefix such as `pt_main_t`.
#include "gui/view/lane_label.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "gui/view/track_index.h"
#include "traces/import/load_trace.h"

namespace meshscope::gui {
namespace {

// ImGui's default font (ProggyClean, 13 px) advances 7 px per character.
float fixed_width(std::string_view s) { return 7.0f * static_cast<float>(s.size()); }

TEST(LaneLabel, FullNameWhenItFits) {
  EXPECT_EQ(fit_lane_label("stream 7 ", 0, 180, fixed_width), "stream 7");
  EXPECT_EQ(fit_lane_label("compute", 2, 180, fixed_width), "compute +2");
}

TEST(LaneLabel, KinetoThreadNamesPutTheNameFirstThenShortenInTheMiddle) {
  const std::string lane = "thread 2910249 (pt_main_thread)";
  EXPECT_EQ(fit_lane_label(lane, 3, 180, fixed_width), "pt_main_thread 2910249 +3");
  EXPECT_EQ(fit_lane_label(lane, 3, 130, fixed_width), "pt_m..d 2910249 +3");
  const std::string tight = fit_lane_label(lane, 3, 90, fixed_width);
  EXPECT_EQ(tight, "pt_ma..ad +3");
  EXPECT_LE(fixed_width(tight), 90);
}

// The bands of one lane take one form, the one its deepest band's suffix fits: a lane of 11 bands
// had read "thread 31149 (python) +9" above "python 31149 +10", as if two threads.
TEST(LaneLabel, TheBandsOfOneLaneReadAlike) {
  const std::string lane = "thread 31149 (python)";
  const float px = fixed_width("thread 31149 (python) +9");  // +9 fits whole, +10 does not
  EXPECT_EQ(fit_lane_label(lane, 9, px, fixed_width), "thread 31149 (python) +9");
  EXPECT_EQ(fit_lane_label(lane, 10, px, fixed_width), "python 31149 +10");
  EXPECT_EQ(fit_lane_label(lane, 9, px, fixed_width, 10), "python 31149 +9");
  EXPECT_EQ(fit_lane_label(lane, 0, px, fixed_width, 10), "python 31149");
  EXPECT_EQ(fit_lane_label(lane, 10, px, fixed_width, 10), "python 31149 +10");
}

TEST(LaneLabel, EveryRowOfAnImportedTraceFitsAndStaysDistinct) {
  const traces::Timeline t =
      traces::load_trace(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                         "tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz");
  TrackIndex index(t);
  for (const float column : {176.0f, 120.0f}) {
    std::set<std::pair<uint16_t, std::string>> seen;
    for (const Row& row : index.rows()) {
      const std::string& lane = t.devices[row.device].lanes[row.lane].name;
      const std::string label = fit_lane_label(lane, row.depth, column, fixed_width);
      EXPECT_LE(fixed_width(label), column) << label;
      if (row.depth > 0) {
        EXPECT_TRUE(label.ends_with(" +" + std::to_string(row.depth))) << label;
      }
      // Never a bare prefix of the thread name: either the whole name or a marked shortening.
      if (lane.find("pt_main_thread") != std::string::npos) {
        EXPECT_TRUE(label.find("pt_main_thread") != std::string::npos ||
                    label.find("..") != std::string::npos)
            << label;
      }
      EXPECT_TRUE(seen.insert({row.device, label}).second) << "two rows labelled " << label;
    }
  }
}

}  // namespace
}  // namespace meshscope::gui
