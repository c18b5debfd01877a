// What an Nsight Systems export holds beyond kernels, copies, sets, runtime calls and NVTX
// push/pop ranges: CUDA graphs traced whole, processes and contexts that reuse a stream id,
// unified-memory copies, NVTX marks and NVTXT ranges, tables the importer does not read, repeated
// rows, gzip-compressed exports, and files that only look like exports. Each is read or counted,
// never dropped without a word.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tests/traces/import_test_util.h"
#include "tests/traces/nsys_test_db.h"
#include "traces/analysis.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using namespace nsys_testing;  // NOLINT(google-build-using-namespace): the test database

const Span* find_span(const Timeline& t, std::string_view name) {
  for (const Span& s : t.spans) {
    if (t.span_name(s) == name) return &s;
  }
  return nullptr;
}

std::string joined_lines(const ImportReport& r) {
  std::string out;
  for (const std::string& l : r.lines()) out += l + "\n";
  return out;
}

// One kernel of 100 ns on GPU 0, stream 7, launched by cudaGraphLaunch's neighbour (the graph's
// launch is correlation 21).
void fill_kernel_and_launches(NsysDb& db) {
  db.exec("INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel'), (3, 'cudaGraphLaunch')");
  db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1100, 0, 1, 7, 20, " +
          g(kGlobalPid) + ", 1, 1, NULL, 1, 1)");
  db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 950, 0, " + g(kGlobalTid) +
          ", 20, 2, 0, NULL), (1150, 1180, 0, " + g(kGlobalTid) + ", 21, 3, 0, NULL)");
}

// nsys --cuda-graph-trace=graph writes each graph's run as one row of its own table, not as
// kernels: that time is the GPU's, and the graph's insides are said to be unseen.
TEST(NsysTables, CudaGraphsTracedWholeAreGpuTime) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_kernel_and_launches(db);
    db.exec(R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL,
                    end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
                    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
                    graphId INTEGER NOT NULL))sql");
    // A graph of 100 us; one without time stamps (CUPTI: 0 and 0); one that starts on the host
    // (deviceId INT_MAX).
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (1200, 101200, 0, 1, 7, 21, " +
            g(kGlobalPid) + ", 5), (0, 0, 0, 1, 7, 22, " + g(kGlobalPid) +
            ", 5), (2000, 3000, 2147483647, 1, 7, 23, " + g(kGlobalPid) + ", 6)");
  }
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);
  const Span* graph = find_span(t, "CUDA graph 5");
  ASSERT_NE(graph, nullptr) << joined_lines(report);
  EXPECT_EQ(graph->kind, SpanKind::kCompute);
  EXPECT_EQ(graph->end_ns - graph->begin_ns, 100000);
  EXPECT_EQ(t.devices[graph->device].name, "GPU 0");
  EXPECT_EQ(report.count(ImportWarning::kNsysWholeGraphs), 1u);
  EXPECT_EQ(report.count(ImportWarning::kMissingField), 2u);  // no times; no device
  // The graph's launch is linked to it like a kernel's.
  const auto linked = std::count_if(t.flows.begin(), t.flows.end(), [&](const Flow& f) {
    return t.span_name(t.spans[f.from]) == "cudaGraphLaunch" && &t.spans[f.to] == graph;
  });
  EXPECT_EQ(linked, 1);
  // Busy is the kernel and the graph.
  const TimelineAnalysis a = analyze(t);
  EXPECT_EQ(a.devices.at(0).busy_ns, 100 + 100000);
}

// CUPTI's stream ids are unique within a context only: two processes (or two contexts of one) on
// one GPU each have a "stream 7", whose kernels must not share a lane.
TEST(NsysTables, ProcessesAndContextsThatReuseAStreamIdGetLanesOfTheirOwn) {
  testing::TempFile file(".sqlite");
  constexpr int64_t kOtherPid = 4400;
  const int64_t other_global_pid = (int64_t{1} << 56) + kOtherPid * 0x1000000;
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'k')");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, NULL, " +
            g(kGlobalPid) + ", 1, 1, NULL, 1, 1), (1500, 2500, 0, 1, 7, NULL, " +
            g(other_global_pid) + ", 1, 1, NULL, 1, 1), (1600, 2600, 0, 2, 7, NULL, " +
            g(other_global_pid) + ", 1, 1, NULL, 1, 1), (1000, 1100, 0, 1, 9, NULL, " +
            g(kGlobalPid) + ", 1, 1, NULL, 1, 1)");
  }
  const Timeline t = load_trace(file.path());
  ASSERT_EQ(t.devices.size(), 1u);
  std::vector<std::string> lanes;
  for (const Lane& l : t.devices[0].lanes) lanes.push_back(l.name);
  std::sort(lanes.begin(), lanes.end());
  EXPECT_EQ(lanes,
            (std::vector<std::string>{"stream 7 (pid 4321)", "stream 7 (pid 4400, context 1)",
                                      "stream 7 (pid 4400, context 2)", "stream 9"}));
  // Each kernel on its own lane: none overlaps another on its lane.
  std::set<uint16_t> used;
  for (const Span& s : t.spans) used.insert(s.lane);
  EXPECT_EQ(used.size(), 4u);
}

TEST(NsysTables, UnifiedMemoryCopiesAreNamedByTheirKind) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10, 20, 0, 1, 7, NULL, NULL, 64, 11, 0, "
        "0), (30, 40, 0, 1, 7, NULL, NULL, 64, 12, 0, 0), (50, 60, 0, 1, 7, NULL, NULL, 64, 13, "
        "0, 0), (70, 80, 0, 1, 7, NULL, NULL, 64, 99, 0, 0)");
  }
  const Timeline t = load_trace(file.path());
  for (const char* name : {"Memcpy UVM HtoD", "Memcpy UVM DtoH", "Memcpy UVM DtoD", "Memcpy"})
    EXPECT_NE(find_span(t, name), nullptr) << name;
}

// Marks are instant events (counted as a Chrome trace's are); NVTXT ranges are ranges; category,
// thread and domain names are no events; anything else is counted as not read, as are the
// unified-memory tables.
TEST(NsysTables, NvtxKindsAndUnifiedMemoryTablesAreReadOrCounted) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'k')");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, NULL, " +
            g(kGlobalPid) + ", 1, 1, NULL, 1, 1)");
    db.exec(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "
        "(1000, NULL, 34, 'mark', " +
        g(kGlobalTid) + "), (1000, 1500, 70, 'nvtxt push/pop', " + g(kGlobalTid) +
        "), (1100, 1900, 71, 'nvtxt start/end', " + g(kGlobalTid) + "), (0, NULL, 33, 'cat', " +
        g(kGlobalTid) + "), (0, NULL, 75, 'NCCL', " + g(kGlobalTid) + "), (1000, 1200, 99, 'x', " +
        g(kGlobalTid) + ")");
    db.exec(
        "CREATE TABLE CUDA_UM_GPU_PAGE_FAULT_EVENTS (start INTEGER, end INTEGER, "
        "globalPid INTEGER, deviceId INTEGER, address INTEGER); "
        "INSERT INTO CUDA_UM_GPU_PAGE_FAULT_EVENTS VALUES (1, 2, 3, 0, 4)");
  }
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);
  EXPECT_NE(find_span(t, "nvtxt push/pop"), nullptr);
  EXPECT_NE(find_span(t, "nvtxt start/end"), nullptr);
  EXPECT_EQ(find_span(t, "cat"), nullptr);
  EXPECT_EQ(report.count(ImportWarning::kUnsupportedPhase), 1u);  // the mark
  EXPECT_EQ(report.count(ImportWarning::kNsysTableNotRead), 2u) << joined_lines(report);
  const std::string lines = joined_lines(report);
  EXPECT_NE(lines.find("CUDA_UM_GPU_PAGE_FAULT_EVENTS 1 row"), std::string::npos) << lines;
  EXPECT_NE(lines.find("NVTX_EVENTS eventType 99 1 row"), std::string::npos) << lines;
}

// A warning names the row as `SELECT * FROM TABLE WHERE rowid = N` finds it (rows deleted before
// it make its place in the table differ); a NULL globalTid is a missing field.
TEST(NsysTables, WarningsNameTheRowid) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel')");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, 0, " + g(kGlobalTid) +
            ", 1, 1, 0, NULL), (3, 4, 0, " + g(kGlobalTid) +
            ", 2, 1, 0, NULL), (5, 6, 0, NULL, 3, 1, 0, NULL)");
    db.exec("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid = 1");
  }
  ImportReport report;
  load_trace(file.path(), {}, &report);
  EXPECT_EQ(report.count(ImportWarning::kMissingField), 1u);
  EXPECT_NE(joined_lines(report).find("CUPTI_ACTIVITY_KIND_RUNTIME rowid 3"), std::string::npos)
      << joined_lines(report);
}

// Calls whose names are lost, a correlation id given twice in one process, and a GPU row given
// twice: each counted; the repeated GPU row is not counted twice in the kernels' time.
TEST(NsysTables, UnnamedCallsAndRepeatedRowsAreCounted) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel')");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 950, 0, " + g(kGlobalTid) +
            ", 20, 2, 0, NULL), (960, 970, 0, " + g(kGlobalTid) +
            ", 20, 2, 0, NULL), (980, 990, 0, " + g(kGlobalTid) + ", 30, 77, 0, NULL)");
    const std::string row = "(1000, 1100, 0, 1, 7, 20, " + g(kGlobalPid) + ", 1, 1, NULL, 1, 1)";
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + row + ", " + row);
  }
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);
  EXPECT_EQ(report.count(ImportWarning::kUnnamedHostCall), 1u);    // name id 77
  EXPECT_EQ(report.count(ImportWarning::kDuplicateLaunch), 1u);    // correlation 20 twice
  EXPECT_EQ(report.count(ImportWarning::kDuplicateActivity), 1u);  // the kernel twice
  EXPECT_EQ(std::count_if(t.spans.begin(), t.spans.end(),
                          [&](const Span& s) { return t.span_name(s) == "k"; }),
            1);
}

// A table whose name holds a double quote is listed among those not read, not an SQL error.
TEST(NsysTables, ATableNameWithAQuoteIsCounted) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'k')");
    db.exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, NULL, NULL, 1, "
        "1, NULL, 1, 1)");
    db.exec(R"sql(CREATE TABLE "CUPTI_ACTIVITY_KIND_X""Y" (start INTEGER);
                  INSERT INTO "CUPTI_ACTIVITY_KIND_X""Y" VALUES (1))sql");
  }
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);
  EXPECT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(report.count(ImportWarning::kNsysTableNotRead), 1u);
}

// A gzip-compressed export reads as the export (the fixtures are stored so), alone or in a folder;
// a file named .sqlite that is not an SQLite database says so rather than what the JSON reader
// would make of it.
TEST(NsysTables, CompressedExportsAreReadAndMisnamedFilesAreNamed) {
  testing::TempFile plain(".sqlite");
  {
    NsysDb db(plain.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'k')");
    db.exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, NULL, NULL, 1, "
        "1, NULL, 1, 1)");
  }
  std::ifstream in(plain.path(), std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  testing::TempFile folder("");
  std::filesystem::create_directories(folder.path());
  const std::filesystem::path gz = folder.path() / "rank1.sqlite.gz";
  {
    std::ofstream out(gz, std::ios::binary);
    out << testing::gzip_bytes(raw);
  }
  const Timeline one = load_trace(gz);
  ASSERT_EQ(one.spans.size(), 1u);
  EXPECT_EQ(one.span_name(one.spans[0]), "k");
  std::filesystem::copy_file(plain.path(), folder.path() / "rank0.sqlite");
  EXPECT_EQ(trace_files_in(folder.path()).size(), 2u);

  testing::TempFile bogus(".sqlite", "{\"traceEvents\": []}");
  try {
    load_trace(bogus.path());
    FAIL() << "a JSON file named .sqlite was read";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("its name (.sqlite) says Nsight Systems"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace meshscope::traces
