// Annotation ranges by name and place (traces/analysis_ranges.h): counted, summed and ordered as
// nsys stats' nvtx_sum does, on a timeline built here and on a real Nsight export checked against
// SQL over the export itself.
#include "traces/analysis_ranges.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/traces/import_test_util.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

TEST(AnalysisRanges, InstancesOfANameAndPlaceAreOneRow) {
  Timeline t;
  const uint16_t gpu = t.add_device(0, "GPU 0");
  t.add_lane(gpu, "stream 7", LaneKind::kCompute);
  const uint16_t host = t.add_device(0, "host");
  t.add_lane(host, "thread 1", LaneKind::kHost);
  const auto add = [&](uint16_t device, const char* name, int64_t begin, int64_t end,
                       SpanKind kind = SpanKind::kAnnotation) {
    Span s;
    s.device = device;
    s.begin_ns = begin;
    s.end_ns = end;
    s.kind = kind;
    s.name = t.strings.intern(name);
    t.add_span(s);
  };
  add(host, "A", 0, 10);
  add(host, "A", 100, 160);  // nested instances each count
  add(host, "A", 110, 130);
  add(gpu, "A", 0, 5);  // the same name on a GPU stream: a row of its own
  add(host, "B", 200, 300);
  add(gpu, "kernel", 0, 1000, SpanKind::kCompute);  // no range
  const RangeSummary r = range_summary(t, 10);
  EXPECT_EQ(r.instances, 5);
  EXPECT_EQ(r.names, 3);
  EXPECT_EQ(r.total_ns, 10 + 60 + 20 + 5 + 100);
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(r.top[0].name, "B");
  EXPECT_EQ(r.top[1].name, "A");
  EXPECT_FALSE(r.top[1].on_device);
  EXPECT_EQ(r.top[1].instances, 3);
  EXPECT_EQ(r.top[1].total_ns, 90);
  EXPECT_DOUBLE_EQ(r.top[1].mean_ns, 30);
  EXPECT_EQ(r.top[1].median_ns, 20);
  EXPECT_EQ(r.top[1].min_ns, 10);
  EXPECT_EQ(r.top[1].max_ns, 60);
  EXPECT_TRUE(r.top[2].on_device);
  double shares = 0;
  for (const RangeStat& s : r.top) shares += s.share;
  EXPECT_NEAR(shares, 1.0, 1e-12);
  // The first N rows, and the table says how many names it left out.
  const RangeSummary two = range_summary(t, 2);
  ASSERT_EQ(two.top.size(), 2u);
  EXPECT_NE(format_range_table(two).find("(1 more names"), std::string::npos);
  EXPECT_NE(format_range_table(range_summary(Timeline{}, 5)).find("none in the trace"),
            std::string::npos);
}

// The H200 Nsight export's NVTX ranges (tests/fixtures/nsys): each top row's instances, total,
// min and max as SQL over NVTX_EVENTS gives them (push/pop and start/end ranges that ended).
TEST(AnalysisRanges, AnNsightExportsRangesAreItsNvtxEvents) {
  const std::filesystem::path gz = std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                   "tests/fixtures/nsys/h200_fuser_report1_schema3.17.sqlite.gz";
  testing::TempFile db(".sqlite", testing::read_gz(gz));
  const RangeSummary r = range_summary(load_trace(gz), 3);
  ASSERT_EQ(r.top.size(), 3u);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.path().c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h,
                               "SELECT count(*), sum(e.end - e.start), min(e.end - e.start), "
                               "max(e.end - e.start) FROM NVTX_EVENTS AS e LEFT JOIN StringIds "
                               "AS s ON s.id = e.textId WHERE e.eventType IN (59, 60) AND e.end "
                               "IS NOT NULL AND COALESCE(e.text, s.value) = ?",
                               -1, &q, nullptr),
            SQLITE_OK);
  for (const RangeStat& row : r.top) {
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, row.name.c_str(), -1, SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    EXPECT_EQ(row.instances, sqlite3_column_int64(q, 0)) << row.name;
    EXPECT_EQ(row.total_ns, sqlite3_column_int64(q, 1)) << row.name;
    EXPECT_EQ(row.min_ns, sqlite3_column_int64(q, 2)) << row.name;
    EXPECT_EQ(row.max_ns, sqlite3_column_int64(q, 3)) << row.name;
    EXPECT_FALSE(row.on_device);
  }
  sqlite3_finalize(q);
  sqlite3_close(h);
  EXPECT_EQ(r.top[0].name, "FusionKernelRuntime::compileFusionParallel");
}

}  // namespace
}  // namespace meshscope::traces
