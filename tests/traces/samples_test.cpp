// The sample traces in traces/samples: each imports cleanly, re-exports to the same bytes, and its
// analysis adds up.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> samples() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(MESHSCOPE_SOURCE_DIR) / "traces/samples")) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json") && !name.ends_with(".config.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Samples, ThereAreSome) { EXPECT_GE(samples().size(), 4u); }

TEST(Samples, ImportWithoutWarningsAndReExportToTheSameBytes) {
  for (const fs::path& p : samples()) {
    ImportReport report;
    const Timeline t = load_trace(p, {}, &report);
    EXPECT_EQ(report.total_warnings(), 0u) << p;
    EXPECT_FALSE(t.devices.empty()) << p;
    EXPECT_FALSE(t.flows.empty()) << p;
    std::ifstream in(p, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    EXPECT_TRUE(export_chrome_json(t) == bytes.str()) << p << ": export(import(file)) differs";
  }
}

TEST(Samples, AnalysisAddsUpAndMatchesTheIdleSpansInTheFile) {
  for (const fs::path& p : samples()) {
    const Timeline t = load_trace(p);
    const TimelineAnalysis a = analyze(t);
    ASSERT_FALSE(a.windows.empty()) << p;
    EXPECT_TRUE(a.has_stage_annotations) << p;
    std::vector<int64_t> idle_spans(t.devices.size(), 0);
    for (const Span& s : t.spans) {
      if (s.kind == SpanKind::kIdle) idle_spans[s.device] += s.duration_ns();
    }
    for (const DeviceAnalysis& d : a.devices) {
      EXPECT_EQ(d.busy_ns + d.idle_ns, d.window_ns) << p << " device " << d.device;
      EXPECT_GT(d.busy_ns, 0) << p << " device " << d.device;
      EXPECT_EQ(idle_spans[d.device], d.idle_ns) << p << " device " << d.device;
      const BubbleAttribution& b = d.bubbles;
      EXPECT_EQ(b.warmup_ns + b.peer_wait_ns + b.cooldown_ns + b.unattributed_ns, d.idle_ns) << p;
    }
    EXPECT_GT(a.bubble_fraction, 0.0) << p;
    EXPECT_LT(a.bubble_fraction, 1.0) << p;
  }
}

}  // namespace
}  // namespace meshscope::traces
