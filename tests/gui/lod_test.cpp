#include "gui/view/lod.h"

#include <gtest/gtest.h>

namespace meshscope::gui {
namespace {

using traces::LaneKind;
using traces::Span;
using traces::Timeline;

// One device, one lane, spans given as (begin, end).
Timeline row_of(const std::vector<std::pair<int64_t, int64_t>>& spans) {
  Timeline t;
  t.add_lane(t.add_device(0, "rank 0"), "compute", LaneKind::kCompute);
  for (auto [b, e] : spans) {
    Span s;
    s.begin_ns = b;
    s.end_ns = e;
    t.add_span(s);
  }
  t.sort_spans();
  return t;
}

TimeAxis axis(int64_t begin, int64_t end, double width) {
  TimeAxis a;
  a.set_width_px(width);
  a.set_bounds(begin, end);
  return a;
}

std::vector<Box> boxes_of(const Timeline& t, const TimeAxis& a, double min_px = 3) {
  const TrackIndex index(t);
  std::vector<Box> out;
  build_boxes(t, index.rows()[0], a, LodOptions{min_px}, out);
  return out;
}

TEST(Lod, WideSpansAreOneBoxEachAtTheirPixels) {
  const Timeline t = row_of({{0, 100}, {200, 300}, {300, 1000}});
  const auto boxes = boxes_of(t, axis(0, 1000, 1000));
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_FLOAT_EQ(boxes[0].x0, 0);
  EXPECT_FLOAT_EQ(boxes[0].x1, 100);
  EXPECT_FLOAT_EQ(boxes[1].x0, 200);
  EXPECT_EQ(boxes[2].count, 1u);
  EXPECT_EQ(t.spans[boxes[2].span].begin_ns, 300);
}

TEST(Lod, OnlySpansInTheVisibleRangeAreVisited) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int64_t i = 0; i < 1000; ++i) spans.push_back({i * 100, i * 100 + 50});
  const Timeline t = row_of(spans);
  TimeAxis a = axis(0, 100'000, 1000);
  a.show(10'000, 12'000);  // 2 ns per px: every span is 25 px wide
  const auto boxes = boxes_of(t, a);
  ASSERT_EQ(boxes.size(), 20u);
  EXPECT_EQ(t.spans[boxes.front().span].begin_ns, 10'000);
  EXPECT_EQ(t.spans[boxes.back().span].begin_ns, 11'900);
}

TEST(Lod, ASpanReachingIntoTheViewFromTheLeftIsClippedNotDropped) {
  const Timeline t = row_of({{0, 5000}, {6000, 7000}});
  TimeAxis a = axis(0, 10'000, 100);
  a.show(4000, 8000);
  const auto boxes = boxes_of(t, a);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_LE(boxes[0].x0, 0);
  EXPECT_FLOAT_EQ(boxes[0].x1, 25);
}

TEST(Lod, DenseNarrowSpansFoldIntoOneBoxWithTheirCount) {
  // 1000 spans of 10 ns every 20 ns over 20 us, drawn 100 px wide: 200 ns per px.
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int64_t i = 0; i < 1000; ++i) spans.push_back({i * 20, i * 20 + 10});
  const Timeline t = row_of(spans);
  const auto boxes = boxes_of(t, axis(0, 20'000, 100));
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].count, 1000u);
  EXPECT_TRUE(boxes[0].folded());
  EXPECT_FLOAT_EQ(boxes[0].x0, 0);
  EXPECT_NEAR(boxes[0].x1, 19'990 / 200.0, 1e-3);
}

TEST(Lod, AVisibleGapSplitsFoldsAndAWideSpanStaysItsOwnBox) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int64_t i = 0; i < 100; ++i) spans.push_back({i * 20, i * 20 + 10});  // fold A
  for (int64_t i = 0; i < 50; ++i)
    spans.push_back({10'000 + i * 20, 10'000 + i * 20 + 10});  // fold B
  spans.push_back({12'000, 18'000});                           // wide
  const Timeline t = row_of(spans);
  const auto boxes = boxes_of(t, axis(0, 20'000, 100));  // 200 ns per px, min 600 ns
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_EQ(boxes[0].count, 100u);
  EXPECT_EQ(boxes[1].count, 50u);
  EXPECT_EQ(boxes[2].count, 1u);
  EXPECT_EQ(t.spans[boxes[2].span].begin_ns, 12'000);
}

TEST(Lod, LongFoldsStopAtAWideSpanOrAGapHiddenDeepInsideABlock) {
  // 10000 spans of 10 ns every 20 ns, except a 5 us span at 5000 and a 2 us gap before 7777:
  // the block summaries must not skip past either.
  std::vector<std::pair<int64_t, int64_t>> spans;
  int64_t at = 0;
  for (int64_t i = 0; i < 10'000; ++i) {
    if (i == 7777) at += 2000;
    const int64_t len = i == 5000 ? 5000 : 10;
    spans.push_back({at, at + len});
    at += len + 10;
  }
  const Timeline t = row_of(spans);
  const auto boxes = boxes_of(t, axis(0, at, 1000));  // ~212 ns per px: min 636 ns
  ASSERT_EQ(boxes.size(), 4u);
  EXPECT_EQ(boxes[0].count, 5000u);
  EXPECT_EQ(boxes[1].count, 1u);
  EXPECT_EQ(t.spans[boxes[1].span].duration_ns(), 5000);
  EXPECT_EQ(boxes[2].count, 7777u - 5001u);
  EXPECT_EQ(boxes[3].count, 10'000u - 7777u);
}

TEST(Lod, EverySpanInViewIsCountedOnceAtAnyZoom) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  int64_t at = 0;
  for (int64_t i = 0; i < 20'000; ++i) {
    const int64_t len = 1 + (i * 7919) % 97;
    const int64_t gap = (i % 13 == 0) ? 500 : (i * 31) % 11;
    spans.push_back({at, at + len});
    at += len + gap;
  }
  const Timeline t = row_of(spans);
  for (double zoom : {1.0, 7.0, 60.0, 900.0, 20'000.0}) {
    TimeAxis a = axis(0, at, 1200);
    a.zoom_at(333, zoom);
    const TrackIndex index(t);
    std::vector<Box> boxes;
    build_boxes(t, index.rows()[0], a, LodOptions{3}, boxes);
    size_t visible = 0;
    for (const Span& s : t.spans) {
      if (a.rel(s.end_ns) > a.begin_rel_ns() && a.rel(s.begin_ns) < a.end_rel_ns()) ++visible;
    }
    size_t counted = 0;
    for (size_t i = 0; i < boxes.size(); ++i) {
      counted += boxes[i].count;
      if (i > 0) {
        EXPECT_EQ(boxes[i].first, boxes[i - 1].first + boxes[i - 1].count);
      }
    }
    EXPECT_EQ(counted, visible) << "zoom " << zoom;
    // Folding bounds the work: far fewer boxes than pixels, whatever the span count.
    EXPECT_LE(boxes.size(), 1200u) << "zoom " << zoom;
  }
}

// The folding rule written the slow way: start a box at each span in view; a narrow one takes
// the following spans while each is narrower than min_ns and starts within min_ns of the last.
std::vector<std::pair<uint32_t, uint32_t>> reference_folds(const Timeline& t, const TimeAxis& a,
                                                           double min_px) {
  const double min_ns = min_px * a.ns_per_px();
  std::vector<std::pair<uint32_t, uint32_t>> out;  // (first, count)
  auto in_view = [&](const Span& s) {
    return a.rel(s.end_ns) > a.begin_rel_ns() && a.rel(s.begin_ns) < a.end_rel_ns();
  };
  size_t i = 0;
  while (i < t.spans.size() && !in_view(t.spans[i])) ++i;
  while (i < t.spans.size() && in_view(t.spans[i])) {
    size_t j = i + 1;
    if (static_cast<double>(t.spans[i].duration_ns()) < min_ns) {
      while (j < t.spans.size() && in_view(t.spans[j]) &&
             static_cast<double>(t.spans[j].begin_ns - t.spans[j - 1].end_ns) < min_ns &&
             static_cast<double>(t.spans[j].duration_ns()) < min_ns) {
        ++j;
      }
    }
    out.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(j - i)});
    i = j;
  }
  return out;
}

TEST(Lod, MatchesTheSlowFoldingRuleOnRandomRowsAtManyZooms) {
  uint64_t state = 12345;
  auto next = [&](uint64_t mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % mod;
  };
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::pair<int64_t, int64_t>> spans;
    int64_t at = 0;
    for (int i = 0; i < 3000; ++i) {
      const int64_t len =
          next(10) == 0 ? 1 + static_cast<int64_t>(next(5000)) : 1 + static_cast<int64_t>(next(40));
      at += next(8) == 0 ? static_cast<int64_t>(next(3000)) : static_cast<int64_t>(next(20));
      spans.push_back({at, at + len});
      at += len;
    }
    const Timeline t = row_of(spans);
    const TrackIndex index(t);
    for (double zoom : {1.0, 3.0, 17.0, 100.0, 1000.0}) {
      TimeAxis a = axis(0, at, 900);
      a.zoom_at(static_cast<double>(next(900)), zoom);
      std::vector<Box> boxes;
      build_boxes(t, index.rows()[0], a, LodOptions{3}, boxes);
      const auto ref = reference_folds(t, a, 3);
      ASSERT_EQ(boxes.size(), ref.size()) << "trial " << trial << " zoom " << zoom;
      std::vector<Box> plain;
      build_boxes(t, index.rows()[0], a, LodOptions{3, false}, plain);
      ASSERT_EQ(plain.size(), boxes.size()) << "trial " << trial << " zoom " << zoom;
      for (size_t b = 0; b < boxes.size(); ++b) {
        EXPECT_EQ(boxes[b].first, ref[b].first)
            << "trial " << trial << " zoom " << zoom << " box " << b;
        EXPECT_EQ(boxes[b].count, ref[b].second)
            << "trial " << trial << " zoom " << zoom << " box " << b;
      }
    }
  }
}

TEST(HitBox, FindsTheBoxUnderTheCursorOrTheNearestWithinTolerance) {
  std::vector<Box> boxes = {{10, 20, 0, 0, 1}, {30, 31, 1, 1, 1}, {60, 90, 2, 2, 1}};
  EXPECT_EQ(hit_box(boxes, 15, 2), 0);
  EXPECT_EQ(hit_box(boxes, 30.5f, 2), 1);
  EXPECT_EQ(hit_box(boxes, 32.5f, 2), 1);  // a one-pixel box is hard to hit exactly
  EXPECT_EQ(hit_box(boxes, 45, 2), -1);
  EXPECT_EQ(hit_box(boxes, 95, 2), -1);
  EXPECT_EQ(hit_box(boxes, 90, 2), 2);
  EXPECT_EQ(hit_box({}, 5, 2), -1);
}

}  // namespace
}  // namespace meshscope::gui
