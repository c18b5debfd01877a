// Nsight Systems SQLite exports, built here with the schema nsys documents (table and column
// names from `nsys export --type sqlite`): kernels, copies and sets per GPU and stream with names
// from StringIds, CUDA runtime calls and their launch flows, NVTX push/pop and start/end ranges.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "tests/traces/import_test_util.h"
#include "tests/traces/nsys_test_db.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using namespace nsys_testing;  // NOLINT(google-build-using-namespace): the test database

// A small but complete run: two launches (one a NCCL all-reduce on stream 13), a copy and a set,
// NVTX ranges including ProfilerStep#3, and rows a real export would not have.
void fill_typical(NsysDb& db) {
  db.exec(R"sql(
    INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'void gemm_kernel<float>(float*)'),
      (3, 'gemm_kernel'), (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)'),
      (5, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (6, 'cudaMemcpyAsync'),
      (7, 'forward'), (8, 'pt_main_thread');
    INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000123456789, '', '');
    INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3');
  )sql");
  db.exec("INSERT INTO ThreadNames VALUES (8, 10, " + g(kGlobalTid) + ")");
  db.exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES "
      "(1000, 1200, 0, " +
      g(kGlobalTid) +
      ", 11, 1, 0, NULL), "
      "(1300, 1400, 0, " +
      g(kGlobalTid) +
      ", 12, 1, 0, NULL), "
      "(1500, 1550, 0, " +
      g(kGlobalTid) + ", 13, 6, 0, NULL)");
  db.exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
      "(2000, 2600, 0, 1, 7, 11, " +
      g(kGlobalPid) +
      ", 2, 3, NULL, 128, 256), "
      "(2100, 5100, 0, 1, 13, 12, " +
      g(kGlobalPid) + ", 4, 5, NULL, 8, 544)");
  db.exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
      "(2700, 2800, 0, 1, 7, 13, " +
      g(kGlobalPid) + ", 1048576, 1, 0, 1)");
  db.exec(
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES "
      "(2900, 2950, 0, 1, 7, NULL, " +
      g(kGlobalPid) + ", 0, 4096)");
  db.exec(
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES "
      "(900, 1600, 59, 'ProfilerStep#3', " +
      g(kGlobalTid) +
      ", NULL), "
      "(950, 1450, 59, NULL, " +
      g(kGlobalTid) +
      ", 7), "
      "(960, 1000, 34, 'a mark', " +
      g(kGlobalTid) +
      ", NULL), "
      "(970, 5000, 60, 'async range', " +
      g(kGlobalTid) +
      ", NULL), "
      "(980, NULL, 59, 'never popped', " +
      g(kGlobalTid) + ", NULL)");
}

const Span* find_span(const Timeline& t, std::string_view name) {
  for (const Span& s : t.spans) {
    if (t.span_name(s) == name) return &s;
  }
  return nullptr;
}

TEST(NsysImport, GpuWorkHostCallsAndNvtxRanges) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_typical(db);
  }
  EXPECT_EQ(detect_trace_format(file.path()), "nsys-sqlite");
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);

  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "GPU 0");
  ASSERT_EQ(t.devices[0].lanes.size(), 2u);
  EXPECT_EQ(t.devices[0].lanes[0].name, "stream 7");
  EXPECT_EQ(t.devices[0].lanes[0].kind, LaneKind::kCompute);
  EXPECT_EQ(t.devices[0].lanes[1].name, "stream 13");
  EXPECT_EQ(t.devices[0].lanes[1].kind, LaneKind::kComm);
  EXPECT_EQ(t.devices[1].name, "host");
  EXPECT_EQ(t.devices[1].lanes[0].name, "pt_main_thread (4322)");

  const Span* gemm = find_span(t, "void gemm_kernel<float>(float*)");  // demangledName
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->kind, SpanKind::kCompute);
  EXPECT_EQ(gemm->begin_ns, 2000);
  EXPECT_EQ(gemm->end_ns, 2600);
  EXPECT_EQ(find_span(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)")->kind,
            SpanKind::kCollective);
  const Span* copy = find_span(t, "Memcpy HtoD");  // copyKind 1
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->bytes, 1048576);
  EXPECT_EQ(find_span(t, "Memset")->bytes, 4096);
  EXPECT_EQ(find_span(t, "cudaLaunchKernel")->kind, SpanKind::kHost);
  EXPECT_EQ(find_span(t, "forward")->kind, SpanKind::kAnnotation);  // text through textId
  EXPECT_NE(find_span(t, "async range"), nullptr);                  // start/end range
  EXPECT_EQ(find_span(t, "a mark"), nullptr);                       // marks are not ranges

  // One launch flow per GPU activity with a runtime call of the same correlation id.
  ASSERT_EQ(t.flows.size(), 3u);
  for (const Flow& f : t.flows) {
    EXPECT_EQ(t.spans[f.from].kind, SpanKind::kHost);
    EXPECT_TRUE(is_device_activity(t.spans[f.to].kind));
  }
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].begin_ns, 900);
  EXPECT_EQ(t.steps[0].end_ns, 5100);  // the all-reduce launched in the step ends at 5100

  EXPECT_EQ(report.count(ImportWarning::kMissingField), 1u);  // the range never popped
  EXPECT_EQ(t.metadata.at("source"), "nsys");
  EXPECT_EQ(t.metadata.at("base_time_ns"), "1700000000123456789");
  EXPECT_EQ(t.metadata.at("gpu"), "NVIDIA H100 80GB HBM3");
}

// Chrome's and Perfetto's importers need the slices of one thread to nest. "async range"
// [970, 5000) is a start/end range that overlaps ProfilerStep#3 [900, 1600) without nesting.
TEST(NsysImport, StartEndRangesGoToTheirOwnLanesSoEveryLaneNests) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_typical(db);
    db.exec(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES "
        "(990, 1200, 60, 'second async', " +
        g(kGlobalTid) + ", NULL), (5000, 5100, 60, 'third async', " + g(kGlobalTid) + ", NULL)");
  }
  const Timeline t = load_trace(file.path());
  const Span* a = find_span(t, "async range");
  const Span* b = find_span(t, "second async");
  const Span* c = find_span(t, "third async");
  ASSERT_TRUE(a && b && c);
  const auto& lanes = t.devices[a->device].lanes;
  EXPECT_EQ(lanes[a->lane].name, "NVTX start/end 0");
  EXPECT_EQ(lanes[b->lane].name, "NVTX start/end 1");  // overlaps a without nesting in it
  EXPECT_EQ(c->lane, a->lane);                         // starts when a ends: a's lane again
  EXPECT_NE(find_span(t, "ProfilerStep#3")->lane, a->lane);
  // Every lane: any two spans are disjoint or one contains the other.
  for (size_t i = 0; i < t.spans.size(); ++i) {
    for (size_t j = i + 1; j < t.spans.size(); ++j) {
      const Span& x = t.spans[i];
      const Span& y = t.spans[j];
      if (x.device != y.device || x.lane != y.lane) continue;
      const bool disjoint = x.end_ns <= y.begin_ns || y.end_ns <= x.begin_ns;
      const bool nested = (x.begin_ns <= y.begin_ns && y.end_ns <= x.end_ns) ||
                          (y.begin_ns <= x.begin_ns && x.end_ns <= y.end_ns);
      EXPECT_TRUE(disjoint || nested) << t.span_name(x) << " / " << t.span_name(y);
    }
  }
}

// NCCL runs ncclSend and ncclRecv as one kernel, ncclDevKernel_SendRecv; the direction comes from
// NCCL's NVTX ranges around the launching call (sendrecv_direction.h), as NCCL names them.
void fill_send_recv(NsysDb& db) {
  db.exec(R"sql(
    INSERT INTO StringIds VALUES (1, 'cuLaunchKernelEx'),
      (2, 'ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)'),
      (3, 'ncclDevKernel_SendRecv'), (4, 'ncclSend');
  )sql");
  struct Call {
    int64_t launch_ns;
    int64_t correlation;
  };
  // Launches: a lone send, a lone recv, a group of two sends, a group of a send and a recv
  // (both ways), a PyTorch-named recv without NCCL's ranges, and one with no ranges at all.
  const std::vector<Call> calls = {{120, 21}, {320, 22}, {560, 23},
                                   {760, 24}, {950, 25}, {1100, 26}};
  std::string runtime, kernels;
  for (const Call& c : calls) {
    runtime += (runtime.empty() ? "" : ", ") + std::string("(") + g(c.launch_ns) + ", " +
               g(c.launch_ns + 5) + ", 0, " + g(kGlobalTid) + ", " + g(c.correlation) +
               ", 1, 0, NULL)";
    kernels += (kernels.empty() ? "" : ", ") + std::string("(") + g(c.launch_ns + 50) + ", " +
               g(c.launch_ns + 90) + ", 0, 1, 13, " + g(c.correlation) + ", " + g(kGlobalPid) +
               ", 2, 3, NULL, 2, 640)";
  }
  db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " + runtime);
  db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + kernels);
  std::string ranges;
  const auto range = [&](int64_t begin, int64_t end, const std::string& text) {
    ranges += (ranges.empty() ? "" : ", ") + std::string("(") + g(begin) + ", " + g(end) +
              ", 59, " + (text.empty() ? "NULL" : "'" + text + "'") + ", " + g(kGlobalTid) + ", " +
              (text.empty() ? "4" : "NULL") + ")";
  };
  // ncclSend ends its own group: ncclGroupStart and ncclGroupEnd inside its range.
  const auto lone = [&](int64_t at, const std::string& call) {
    range(at, at + 100, call);
    range(at + 5, at + 6, "ncclGroupStart");
    range(at + 10, at + 90, "ncclGroupEnd");
  };
  lone(100, "");  // "ncclSend" through StringIds, as nvtx3's registered strings are exported
  lone(300, "ncclRecv");
  range(500, 501, "ncclGroupStart");
  lone(505, "ncclSend");  // its launch is deferred to the outer group's end
  range(530, 540, "ncclSend");
  range(550, 600, "ncclGroupEnd");
  range(700, 701, "ncclGroupStart");
  range(710, 720, "ncclSend");
  range(730, 740, "ncclRecv");
  range(750, 800, "ncclGroupEnd");
  range(900, 1000, "nccl:recv 1<-0");
  db.exec("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES " +
          ranges);
}

TEST(NsysImport, SendRecvKernelsTakeTheirDirectionFromNcclsNvtxRanges) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_send_recv(db);
  }
  for (const bool keep_host : {true, false}) {
    ImportOptions options;
    options.keep_host = keep_host;
    ImportReport report;
    const Timeline t = load_trace(file.path(), options, &report);
    std::vector<SpanKind> kinds;
    for (const Span& s : t.spans) {
      if (t.devices[s.device].name == "GPU 0") kinds.push_back(s.kind);
    }
    const std::vector<SpanKind> expected = {SpanKind::kSend, SpanKind::kRecv, SpanKind::kSend,
                                            SpanKind::kSend, SpanKind::kRecv, SpanKind::kSend};
    EXPECT_EQ(kinds, expected) << "keep_host " << keep_host;
    // The group of a send and a recv moves data both ways; the last launch has no ranges.
    EXPECT_EQ(report.count(ImportWarning::kSendRecvDirection), 2u) << "keep_host " << keep_host;
  }
}

// Loads an export whose one string is 'k' (id 1) and whose kernels `rows` inserts (what follows
// "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL"), with what it skipped in `report`.
Timeline load_kernel_rows(const std::string& rows, ImportReport& report) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'k')");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL " + rows);
  }
  return load_trace(file.path(), {}, &report);
}

TEST(NsysImport, BadRowsAreCountedAndSkipped) {
  // SQLite keeps whatever type it is given: text where a number belongs, end before start.
  ImportReport report;
  const Timeline t = load_kernel_rows(
      "VALUES "
      "(10, 20, 0, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1), "
      "('x', 20, 0, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1), "
      "(30, 20, 0, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1), "
      "(10, 20, 'gpu', 1, 7, NULL, NULL, 1, 1, NULL, 1, 1), "
      "(10, 20, 0, 1, 7, NULL, NULL, 99, 99, NULL, 1, 1), "
      "(-9000000000000000000, 20, 0, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1)",
      report);
  EXPECT_EQ(t.spans.size(), 2u);  // the good row, and the one whose name id is unknown
  EXPECT_EQ(report.count(ImportWarning::kWrongType), 2u);
  EXPECT_EQ(report.count(ImportWarning::kNegativeDuration), 1u);
  EXPECT_EQ(report.count(ImportWarning::kBadNumber), 1u);  // 9e18 ns before the 20 ns end
  EXPECT_NE(report.lines().at(0).find("CUPTI_ACTIVITY_KIND_KERNEL rowid 2"), std::string::npos);
  // The kernel kept without a name is said (its name decides whether it is communication).
  EXPECT_EQ(report.count(ImportWarning::kUnnamedKernel), 1u);
}

// What the Chrome importer says of a suspect launch and a step marker without a number, the
// Nsight importer says too, naming the row.
TEST(NsysImport, AKernelBeforeItsLaunchAndAnUnnumberedStepAreNamed) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_typical(db);
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (2500000, 2500100, 0, " +
            g(kGlobalTid) + ", 14, 1, 0, NULL)");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500, 560, 0, 1, 7, 14, " +
            g(kGlobalPid) + ", 2, 3, NULL, 128, 256)");
    db.exec(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES "
        "(3000, 3100, 59, 'ProfilerStep#x', " +
        g(kGlobalTid) + ", NULL)");
  }
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);
  EXPECT_EQ(t.steps.size(), 1u);  // ProfilerStep#3 only
  EXPECT_EQ(report.count(ImportWarning::kDeviceBeforeLaunch), 1u);
  EXPECT_EQ(report.count(ImportWarning::kUnnumberedStep), 1u);
  const std::vector<std::string> lines = report.lines();
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("at 500 ns, launched at 2500000 ns") != l.npos;
  }));
}

TEST(NsysImport, RowsOfDevicesPastTheTimelinesLimitAreReportedAsSuch) {
  // 65,537 GPUs: the Timeline holds 65,535 devices; the rows of the other two are skipped as
  // "beyond the limit", not as "a field of the wrong type" (their fields are fine).
  ImportReport report;
  const Timeline t = load_kernel_rows(
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 65536) "
      "SELECT 10, 20, i, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1 FROM n",
      report);
  EXPECT_EQ(t.devices.size(), 65535u);
  EXPECT_EQ(t.spans.size(), 65535u);
  EXPECT_EQ(report.count(ImportWarning::kWrongType), 0u);
  EXPECT_GE(report.count(ImportWarning::kTooManyDevicesOrLanes), 2u);
}

TEST(NsysImport, AGpuWhoseEveryRowWasSkippedDoesNotAppear) {
  ImportReport report;
  const Timeline t = load_kernel_rows(
      "VALUES "
      "(10, 20, 0, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1), "
      "(30, 20, 1, 1, 7, NULL, NULL, 1, 1, NULL, 1, 1)",  // GPU 1: end before start only
      report);
  EXPECT_EQ(report.count(ImportWarning::kNegativeDuration), 1u);
  ASSERT_EQ(t.devices.size(), 1u) << "GPU 1 holds nothing: not a 100% bubble";
  EXPECT_EQ(t.devices[0].name, "GPU 0");
}

TEST(NsysImport, TextThatIsNotUtf8IsRepairedAsTheExportWouldWriteIt) {
  // SQLite stores any bytes as TEXT; the Timeline holds valid UTF-8 (as JSON can), so a name
  // survives export and re-import unchanged.
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, CAST(X'6B80FF' AS TEXT))");        // "k", 2 bad bytes
    db.exec("INSERT INTO TARGET_INFO_GPU VALUES (0, CAST(X'4755C3' AS TEXT))");  // cut short
    db.exec(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 1, 7, NULL, NULL, 1, 1, NULL, "
        "1, 1)");
  }
  const Timeline t = load_trace(file.path());
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.span_name(t.spans[0]), "k\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(t.metadata.at("gpu"), "GU\xEF\xBF\xBD");
  const Timeline back = load_trace_bytes(export_chrome_json(t), "back.json");
  EXPECT_EQ(back.span_name(back.spans[0]), t.span_name(t.spans[0]));
  EXPECT_EQ(back.metadata.at("gpu"), t.metadata.at("gpu"));
}

TEST(NsysImport, KeepHostOffDropsRuntimeAndNvtx) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_typical(db);
  }
  ImportOptions options;
  options.keep_host = false;
  ImportReport report;
  const Timeline t = load_trace(file.path(), options, &report);
  EXPECT_EQ(t.devices.size(), 1u);
  EXPECT_TRUE(t.flows.empty());
  // 3 runtime calls and 3 ranges (the never-popped one counts as a missing field instead).
  EXPECT_EQ(report.count(ImportWarning::kHostDropped), 3u + 3u);
  // The step still covers the GPU work launched in it, as with the host kept (the test above).
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].begin_ns, 900);
  EXPECT_EQ(t.steps[0].end_ns, 5100);
}

// Two processes whose main threads have the same thread id (as in two containers) keep their own
// names.
TEST(NsysImport, ThreadNamesBelongToTheirProcess) {
  testing::TempFile file(".sqlite");
  const int64_t other_pid = (int64_t{1} << 56) + (kPid + 1) * 0x1000000;
  {
    NsysDb db(file.path());
    db.exec("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'trainer'), (3, 'loader')");
    db.exec("INSERT INTO ThreadNames VALUES (2, 10, " + g(kGlobalPid + 7) + "), (3, 10, " +
            g(other_pid + 7) + ")");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 200, 0, " + g(kGlobalPid + 7) +
            ", 1, 1, 0, NULL), (300, 400, 0, " + g(other_pid + 7) + ", 2, 1, 0, NULL)");
  }
  const Timeline t = load_trace(file.path());
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "host pid " + g(kPid));
  ASSERT_EQ(t.devices[0].lanes.size(), 1u);
  EXPECT_EQ(t.devices[0].lanes[0].name, "trainer (7)");
  EXPECT_EQ(t.devices[1].name, "host pid " + g(kPid + 1));
  ASSERT_EQ(t.devices[1].lanes.size(), 1u);
  EXPECT_EQ(t.devices[1].lanes[0].name, "loader (7)");
}

// `analyze <(cat report.sqlite)`: SQLite opens the path again, which a pipe whose writer is gone
// would block for ever; refused with what to give instead.
TEST(NsysImport, AnExportThroughAPipeIsRefusedNotWaitedFor) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_typical(db);
  }
  std::string bytes;
  {
    std::ifstream in(file.path(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::filesystem::path fifo = file.path().string() + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::signal(SIGPIPE, SIG_IGN);  // the reader may close before the writer is done
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    for (size_t done = 0; fd >= 0 && done < bytes.size();) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (fd >= 0) ::close(fd);
  });
  std::string error;
  try {
    load_trace(fifo);
  } catch (const ImportError& e) {
    error = e.what();
  }
  writer.join();
  std::filesystem::remove(fifo);
  EXPECT_NE(error.find("an SQLite export read through a pipe"), std::string::npos) << error;
}

TEST(NsysImport, ADatabaseThatIsNotAnNsysExport) {
  testing::TempFile file(".sqlite");
  {
    sqlite3* db = nullptr;
    sqlite3_open(file.path().c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t (x INTEGER); CREATE VIEW NVTX_EVENTS AS SELECT 1;", nullptr,
                 nullptr, nullptr);
    sqlite3_close(db);
  }
  try {
    load_trace(file.path());
    FAIL() << "no error";
  } catch (const ImportError& e) {
    EXPECT_EQ(std::string(e.what()),
              file.path().string() +
                  ": not an Nsight Systems export: none of the CUPTI_ACTIVITY_KIND_* or "
                  "NVTX_EVENTS tables is there");
  }
}

// SQLite quotes a malformed schema's SQL in its error, newlines and all; the error stays one line.
TEST(NsysImport, AMalformedSchemaIsReportedOnOneLine) {
  testing::TempFile file(".sqlite");
  {
    sqlite3* db = nullptr;
    sqlite3_open(file.path().c_str(), &db);
    sqlite3_exec(db,
                 "CREATE TABLE NVTX_EVENTS (start INTEGER);"
                 "PRAGMA writable_schema = ON;"
                 "UPDATE sqlite_master SET sql = 'CREATE TABLE NVTX_EVENTS (start INTEGER,\n"
                 "    \"end    INTEGER\n  )' WHERE name = 'NVTX_EVENTS';",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  try {
    load_trace(file.path());
    FAIL() << "no error";
  } catch (const ImportError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file.path().string() + ": SQLite: malformed database schema", 0), 0u)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.find("  "), std::string::npos) << what;
  }
}

TEST(NsysImport, TheSameFromMemory) {
  testing::TempFile file(".sqlite");
  {
    NsysDb db(file.path());
    fill_typical(db);
  }
  std::ifstream in(file.path(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Timeline a = load_trace(file.path());
  const Timeline b = load_trace_bytes(bytes, "memory.sqlite");
  EXPECT_EQ(a.spans.size(), b.spans.size());
  EXPECT_EQ(a.flows.size(), b.flows.size());
  // A truncated database is an error, not a crash.
  EXPECT_THROW(load_trace_bytes(std::string_view(bytes).substr(0, bytes.size() / 2), "cut"),
               ImportError);
}

}  // namespace
}  // namespace meshscope::traces
