#include "gui/view/stats_model.h"

#include <gtest/gtest.h>

#include <numeric>

#include "gui/view/synthetic.h"

namespace meshscope::gui {
namespace {

using traces::SpanKind;

TEST(StatsModel, PartsAddUpToEachDevicesWindowAndBubblesToItsIdle) {
  SyntheticOptions o;
  o.dp = 2;
  o.pp = 4;
  o.microbatches = 4;
  o.steps = 2;
  traces::Timeline t = make_synthetic_pipeline(o);
  traces::add_idle_spans(t);
  t.sort_spans();
  const traces::TimelineAnalysis a = traces::analyze(t);
  const StatsModel m = build_stats(t, a, 5);
  ASSERT_EQ(m.bars.size(), t.devices.size());
  EXPECT_EQ(m.steps, 2u);
  EXPECT_DOUBLE_EQ(m.bubble_fraction, a.bubble_fraction);
  for (const StatsBar& bar : m.bars) {
    EXPECT_EQ(std::accumulate(bar.ns.begin(), bar.ns.end(), int64_t{0}), m.window_ns);
    const int64_t bubbles = bar.ns[static_cast<size_t>(StatPart::kWarmup)] +
                            bar.ns[static_cast<size_t>(StatPart::kPeerWait)] +
                            bar.ns[static_cast<size_t>(StatPart::kCooldown)] +
                            bar.ns[static_cast<size_t>(StatPart::kIdle)];
    EXPECT_EQ(bubbles, bar.idle_ns);
    for (int64_t part : bar.ns) EXPECT_GE(part, 0);
  }
  // In 1F1B the first stage waits longest for its first backward; the last stage has no warm-up.
  const auto& first = m.bars[0].ns;
  const auto& last = m.bars[3].ns;
  EXPECT_GT(first[static_cast<size_t>(StatPart::kPeerWait)],
            last[static_cast<size_t>(StatPart::kPeerWait)]);
  EXPECT_GT(last[static_cast<size_t>(StatPart::kWarmup)],
            first[static_cast<size_t>(StatPart::kWarmup)]);
}

TEST(StatsModel, LargestGapsAreTheLongestIdleSpansLongestFirst) {
  SyntheticOptions o;
  o.pp = 4;
  o.microbatches = 4;
  traces::Timeline t = make_synthetic_pipeline(o);
  traces::add_idle_spans(t);
  t.sort_spans();
  const StatsModel m = build_stats(t, traces::analyze(t), 3);
  ASSERT_EQ(m.largest_gaps.size(), 3u);
  int64_t longest = 0;
  for (const auto& s : t.spans) {
    if (s.kind == SpanKind::kIdle) longest = std::max(longest, s.duration_ns());
  }
  EXPECT_EQ(m.largest_gaps[0].end_ns - m.largest_gaps[0].begin_ns, longest);
  for (size_t i = 1; i < m.largest_gaps.size(); ++i) {
    EXPECT_GE(m.largest_gaps[i - 1].end_ns - m.largest_gaps[i - 1].begin_ns,
              m.largest_gaps[i].end_ns - m.largest_gaps[i].begin_ns);
  }
  EXPECT_EQ(t.spans[m.largest_gaps[0].span].kind, SpanKind::kIdle);
}

}  // namespace
}  // namespace meshscope::gui
