#include "gui/view/row_layout.h"

#include <gtest/gtest.h>

namespace meshscope::gui {
namespace {

using traces::LaneKind;
using traces::Span;
using traces::Timeline;

// Device 0: two lanes; device 1: one lane; device 2: no spans.
Timeline three_devices() {
  Timeline t;
  for (int r = 0; r < 3; ++r) {
    const uint16_t d = t.add_device(r, "rank " + std::to_string(r));
    t.add_lane(d, "compute", LaneKind::kCompute);
    t.add_lane(d, "comm", LaneKind::kComm);
  }
  for (auto [dev, lane] : {std::pair{0, 0}, {0, 1}, {1, 0}}) {
    Span s;
    s.device = static_cast<uint16_t>(dev);
    s.lane = static_cast<uint16_t>(lane);
    s.end_ns = 10;
    t.add_span(s);
  }
  t.sort_spans();
  return t;
}

TEST(RowLayout, StacksHeadersRowsAndGaps) {
  const Timeline t = three_devices();
  const TrackIndex index(t);
  const RowLayout layout(index, t.devices.size(), RowLayoutOptions{10, 20, 5});
  EXPECT_FLOAT_EQ(layout.device_top(0), 0);
  EXPECT_FLOAT_EQ(layout.row_top(0), 10);
  EXPECT_FLOAT_EQ(layout.row_top(1), 30);
  EXPECT_FLOAT_EQ(layout.device_top(1), 55);
  EXPECT_FLOAT_EQ(layout.row_top(2), 65);
  EXPECT_FLOAT_EQ(layout.device_top(2), 90);
  EXPECT_FLOAT_EQ(layout.total_px(), 105);
}

TEST(RowLayout, HitTellsHeaderRowOrNothing) {
  const Timeline t = three_devices();
  const TrackIndex index(t);
  const RowLayout layout(index, t.devices.size(), RowLayoutOptions{10, 20, 5});
  auto h = layout.hit(5);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->device, 0);
  EXPECT_FALSE(h->row);
  h = layout.hit(35);
  ASSERT_TRUE(h && h->row);
  EXPECT_EQ(*h->row, 1u);
  EXPECT_FALSE(layout.hit(52));  // the gap after device 0
  h = layout.hit(70);
  ASSERT_TRUE(h && h->row);
  EXPECT_EQ(*h->row, 2u);
  EXPECT_EQ(h->device, 1);
  h = layout.hit(95);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->device, 2);
  EXPECT_FALSE(layout.hit(-1));
  EXPECT_FALSE(layout.hit(500));
}

TEST(RowLayout, CollapsedDeviceShowsOnlyItsHeader) {
  const Timeline t = three_devices();
  const TrackIndex index(t);
  const RowLayout layout(index, t.devices.size(), RowLayoutOptions{10, 20, 5}, {true});
  EXPECT_FALSE(layout.row_shown(0));
  EXPECT_FALSE(layout.row_shown(1));
  EXPECT_TRUE(layout.row_shown(2));
  EXPECT_FLOAT_EQ(layout.device_top(1), 15);
  EXPECT_FALSE(layout.hit(12));  // below the collapsed header: its gap
}

TEST(RowLayout, RowsBetweenIsTheVerticallyVisibleRange) {
  const Timeline t = three_devices();
  const TrackIndex index(t);
  const RowLayout layout(index, t.devices.size(), RowLayoutOptions{10, 20, 5});
  EXPECT_EQ(layout.rows_between(0, 1000), (std::pair<size_t, size_t>{0, 3}));
  EXPECT_EQ(layout.rows_between(35, 40), (std::pair<size_t, size_t>{1, 2}));
  EXPECT_EQ(layout.rows_between(29, 66), (std::pair<size_t, size_t>{0, 3}));
  EXPECT_EQ(layout.rows_between(86, 200).first, 3u);
}

}  // namespace
}  // namespace meshscope::gui
