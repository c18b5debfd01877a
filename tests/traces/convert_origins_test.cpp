// `convert` keeps what imported events were: Kineto's correlation ids, streams, categories and
// args come back in the Chrome export, every converted real trace passes a strict Trace Event
// Format check, and origins survive sorting, idle spans, the byte codec and multi-rank merging.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/traces/import_test_util.h"
#include "tests/traces/timeline_equal.h"
#include "tests/traces/trace_event_check.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"
#include "traces/timeline_codec.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;
using testing::check_trace_events;

const fs::path kFixtures = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures";

// A Kineto trace in miniature: a launch with a large correlation id (HTA reads them as int64; a
// renumbered one from 0 got downcast), a kernel with nested args, a cuda_sync event with a stream.
constexpr std::string_view kKineto = R"({"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 12,
  "ts": 100.0, "dur": 5.0, "args": {"External id": 31, "cbid": 211, "correlation": 700123}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 110.0, "dur": 20.0,
  "args": {"External id": 31, "device": 0, "stream": 7, "correlation": 700123,
           "grid": [128, 1, 1], "shared memory": 0, "kind": "ignored"}},
 {"ph": "X", "cat": "cuda_sync", "name": "Event Sync", "pid": 0, "tid": 7, "ts": 131.0,
  "dur": 5.0, "args": {"device": 0, "stream": 7, "correlation": 700200, "wait_on_stream": -1}},
 {"ph": "B", "cat": "user_annotation", "name": "step", "pid": 11, "tid": 12, "ts": 90.0,
  "args": {"Record function id": 4}},
 {"ph": "E", "pid": 11, "tid": 12, "ts": 140.0}
]})";

Timeline import_text(std::string_view text, bool keep_origins) {
  ImportOptions o;
  o.keep_origins = keep_origins;
  testing::TempFile f(".json", text);
  return load_trace(f.path(), o);
}

const nlohmann::json& event_named(const nlohmann::json& doc, const std::string& name) {
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("name", "") == name) return e;
  }
  static const nlohmann::json none;
  ADD_FAILURE() << "no X event " << name;
  return none;
}

TEST(ConvertOrigins, KinetoCorrelationStreamCategoryAndArgsComeBack) {
  const Timeline t = import_text(kKineto, /*keep_origins=*/true);
  ASSERT_EQ(t.origins.size(), t.spans.size());
  const std::string out = export_chrome_json(t);
  const auto check = check_trace_events(out);
  EXPECT_TRUE(check.problems.empty()) << ::testing::PrintToString(check.problems);
  const auto doc = nlohmann::json::parse(out);
  const auto& launch = event_named(doc, "cudaLaunchKernel");
  EXPECT_EQ(launch["cat"], "cuda_runtime");
  EXPECT_EQ(launch["args"]["correlation"], 700123);
  EXPECT_EQ(launch["args"]["cbid"], 211);
  EXPECT_EQ(launch["args"]["External id"], 31);
  const auto& kernel = event_named(doc, "gemm");
  EXPECT_EQ(kernel["args"]["correlation"], 700123);
  EXPECT_EQ(kernel["args"]["stream"], 7);
  EXPECT_EQ(kernel["args"]["device"], 0);
  EXPECT_EQ(kernel["args"]["grid"], nlohmann::json::parse("[128, 1, 1]"));
  EXPECT_EQ(kernel["args"]["kind"], "compute");  // meshscope's own key, never written twice
  const auto& sync = event_named(doc, "Event Sync");
  EXPECT_EQ(sync["cat"], "cuda_sync");
  EXPECT_EQ(sync["args"]["stream"], 7);
  EXPECT_EQ(sync["args"]["correlation"], 700200);
  EXPECT_EQ(sync["args"]["wait_on_stream"], -1);
  EXPECT_EQ(event_named(doc, "step")["args"]["Record function id"], 4);
}

TEST(ConvertOrigins, FlowsWithoutOwnIdsAreNumberedPastTheImportedOnes) {
  Timeline t = import_text(kKineto, /*keep_origins=*/true);
  // A launch flow between spans with no correlation of their own must not reuse 700123.
  const uint16_t d = t.add_device(5, "extra");
  t.add_lane(d, "stream 1", LaneKind::kCompute);
  t.add_lane(d, "host", LaneKind::kHost);
  const uint32_t host = t.add_span(Span{.begin_ns = 0,
                                        .end_ns = 10,
                                        .device = d,
                                        .lane = 1,
                                        .kind = SpanKind::kHost,
                                        .phase = Phase::kNone});
  const uint32_t gpu = t.add_span(Span{.begin_ns = 20,
                                       .end_ns = 30,
                                       .device = d,
                                       .lane = 0,
                                       .kind = SpanKind::kCompute,
                                       .phase = Phase::kNone});
  t.add_flow(host, gpu);
  const auto doc = nlohmann::json::parse(export_chrome_json(t));
  std::multiset<int64_t> ids;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "X" && e["args"].contains("correlation")) {
      ids.insert(e["args"]["correlation"].get<int64_t>());
    }
  }
  EXPECT_EQ(ids.count(700123), 2u);  // the launch and its kernel, nothing else
  EXPECT_EQ(ids.count(700200), 1u);
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_GT(*ids.rbegin(), 700200);
}

// Autograd's forward -> backward link and a launch flow, as PyTorch's profiler writes them.
constexpr std::string_view kKinetoFlows = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 11, "tid": 12, "ts": 100, "dur": 10},
 {"ph": "X", "cat": "cpu_op", "name": "MmBackward0", "pid": 11, "tid": 12, "ts": 200, "dur": 10},
 {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 5, "pid": 11, "tid": 12, "ts": 100},
 {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 5, "pid": 11, "tid": 12, "ts": 200,
  "bp": "e"},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 12, "ts": 202,
  "dur": 3, "args": {"correlation": 9}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 210, "dur": 20,
  "args": {"stream": 7, "correlation": 9}},
 {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 9, "pid": 11, "tid": 12, "ts": 202},
 {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 9, "pid": 0, "tid": 7, "ts": 210, "bp": "e"}
]})";

// The categories of the flow events in an exported document, one per s/f pair.
std::multiset<std::string> flow_categories(const nlohmann::json& doc) {
  std::multiset<std::string> cats;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "s") cats.insert(e.value("cat", ""));
  }
  return cats;
}

TEST(ConvertOrigins, FlowCategoriesComeBackThroughSortingMergingAndTheCodec) {
  Timeline t = import_text(kKinetoFlows, /*keep_origins=*/true);
  ASSERT_EQ(t.flows.size(), 2u);
  const std::multiset<std::string> expected = {"ac2g", "fwdbwd"};
  EXPECT_EQ(flow_categories(nlohmann::json::parse(export_chrome_json(t))), expected);
  t.sort_spans();
  add_idle_spans(t);
  const Timeline decoded = decode_timeline(encode_timeline(t));
  testing::expect_same_timeline(decoded, t);
  EXPECT_EQ(flow_categories(nlohmann::json::parse(export_chrome_json(decoded))), expected);
  // A folder of ranks merges each file's strings: the category follows into the merged table.
  const testing::TempFile dir("_ranks");
  fs::create_directory(dir.path());
  for (const char* rank : {"rank0.json", "rank1.json"}) {
    std::ofstream(dir.path() / rank) << kKinetoFlows;
  }
  ImportOptions o;
  o.keep_origins = true;
  const std::vector<fs::path> folder = {dir.path()};
  const Timeline merged = load_traces(folder, o);
  EXPECT_EQ(flow_categories(nlohmann::json::parse(export_chrome_json(merged))),
            (std::multiset<std::string>{"ac2g", "ac2g", "fwdbwd", "fwdbwd"}));
  // Without keep_origins (analysis) the category is not kept: the exporter names it by kind.
  const Timeline plain = import_text(kKinetoFlows, /*keep_origins=*/false);
  EXPECT_EQ(flow_categories(nlohmann::json::parse(export_chrome_json(plain))),
            (std::multiset<std::string>{"ac2g", "flow"}));
}

// Kineto writes the GPU's memory counter on the GPU's pid (its device id), where the kernels are;
// a counter on a process that holds nothing cannot be shown and is said to be dropped.
TEST(ConvertOrigins, AGpusCounterStaysWithItsGpuAndADroppedOneIsSaid) {
  const testing::TempFile f(".json", R"({"traceEvents": [
 {"ph": "C", "name": "GPU Memory", "pid": 0, "ts": 100, "args": {"Allocated": 1024}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 110, "dur": 20,
  "args": {"device": 0, "stream": 7, "correlation": 9}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 11, "tid": 12, "ts": 100, "dur": 10},
 {"ph": "C", "name": "GPU Memory", "pid": 0, "ts": 140, "args": {"Allocated": 0}},
 {"ph": "C", "name": "Queue", "pid": 555, "ts": 100, "args": {"depth": 3}}
]})");
  ImportReport report;
  ImportOptions o;
  o.keep_origins = true;
  const Timeline t = load_trace(f.path(), o, &report);
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].name, "GPU Memory.Allocated");
  EXPECT_EQ(t.devices[t.counters[0].device].name, "GPU 0");
  EXPECT_EQ(t.counters[0].samples.size(), 2u);
  EXPECT_EQ(report.count(ImportWarning::kCounterWithoutSpans), 1u);
  EXPECT_NE(report.lines().back().find("counter \"Queue.depth\""), std::string::npos)
      << report.lines().back();
}

// A stream of NCCL kernels alone is a communication lane; one that also runs compute (vLLM's
// all-reduce beside its GEMMs on one stream) stays a compute lane.
TEST(ConvertOrigins, AStreamIsACommLaneOnlyWhenItRunsNothingButCommunication) {
  const Timeline t = import_text(R"({"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 20,
  "args": {"device": 0, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0,
  "tid": 7, "ts": 40, "dur": 20, "args": {"device": 0, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "pid": 0, "tid": 13,
  "ts": 40, "dur": 20, "args": {"device": 0, "stream": 13}}
]})",
                                 /*keep_origins=*/false);
  ASSERT_EQ(t.devices.size(), 1u);
  std::map<std::string, LaneKind> kinds;
  for (const Lane& l : t.devices[0].lanes) kinds[l.name] = l.kind;
  EXPECT_EQ(kinds.at("stream 7"), LaneKind::kCompute);
  EXPECT_EQ(kinds.at("stream 13"), LaneKind::kComm);
}

TEST(ConvertOrigins, OffByDefaultSoAnalysisPaysNothing) {
  const Timeline t = import_text(kKineto, /*keep_origins=*/false);
  EXPECT_TRUE(t.origins.empty());
  EXPECT_EQ(t.origin_args.bytes(), 0u);
}

TEST(ConvertOrigins, SurviveIdleSpansCodecAndReimport) {
  Timeline t = import_text(kKineto, /*keep_origins=*/true);
  add_idle_spans(t);
  remove_idle_spans(t);
  ASSERT_EQ(t.origins.size(), t.spans.size());
  for (const SpanOrigin& o : t.origins) {
    // Each origin still sits on its own span: the kernel's on the kernel.
    if (t.span_name(t.spans[o.span]) == "gemm") {
      EXPECT_EQ(o.stream, 7);
    }
    if (t.span_name(t.spans[o.span]) == "cudaLaunchKernel") {
      EXPECT_EQ(o.stream, SpanOrigin::kNoStream);
    }
  }
  testing::expect_same_timeline(decode_timeline(encode_timeline(t)), t);
  // Converting a converted file changes nothing.
  const std::string once = export_chrome_json(t);
  const std::string twice = export_chrome_json(import_text(once, /*keep_origins=*/true));
  EXPECT_EQ(once, twice);
}

TEST(ConvertOrigins, MeshscopesOwnCollectiveAndWaitArgsAreWrittenOnce) {
  // meshscope's export of a collective that waited for its peer: converting it writes its
  // collective_* and waited_ns args once (they had been kept as the source's args as well, and
  // doubled at each conversion).
  Timeline t;
  const uint16_t d = t.add_device(0, "rank 0 · dp0 pp0 tp0", MeshCoord{0, 0, 0});
  t.add_lane(d, "comm", LaneKind::kComm);
  Span s{.begin_ns = 1000, .end_ns = 2000, .bytes = 4096, .device = d};
  s.kind = SpanKind::kCollective;
  s.name = t.strings.intern("tp all-reduce block0.fc2 s0");
  const uint32_t ar = t.add_span(s);
  t.set_collective(ar, Collective{.op = CollectiveOp::kAllReduce,
                                  .group = GroupKind::kTp,
                                  .bytes = 4096,
                                  .algorithm = CollectiveAlgorithm::kAuto});
  t.set_wait(ar, 250);
  const std::string own = export_chrome_json(t);
  const std::string once = export_chrome_json(import_text(own, /*keep_origins=*/true));
  const auto check = check_trace_events(once);
  EXPECT_TRUE(check.problems.empty()) << check.problems.front();
  EXPECT_EQ(export_chrome_json(import_text(once, /*keep_origins=*/true)), once);
  const Timeline back = import_text(once, /*keep_origins=*/true);
  ASSERT_EQ(back.waits.size(), 1u);
  EXPECT_EQ(back.reached_ns(back.waits[0].span), 750);
}

TEST(ConvertOrigins, CpuOpsOfACpuOnlyTorchJobGetNoStream) {
  // torch pipelining on gloo: each rank's ops become its device's compute, but the source has no
  // stream anywhere, and HTA takes every event with a stream for a GPU kernel.
  ImportOptions o;
  o.keep_origins = true;
  const Timeline t = load_trace(kFixtures / "torch/1F1B/rank1.json.gz", o);
  const nlohmann::json out = nlohmann::json::parse(export_chrome_json(t));
  size_t with_stream = 0, x = 0;
  for (const auto& e : out["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    ++x;
    if (e.contains("args") && e["args"].contains("stream")) ++with_stream;
  }
  EXPECT_GT(x, 100u);
  EXPECT_EQ(with_stream, 0u);
}

// Every X event of the source with a correlation id keeps it, on an event of the same name and
// start; cuda_sync events keep their stream.
using Key = std::tuple<std::string, double, int64_t, int64_t>;  // name, ts, correlation, stream
std::multiset<Key> correlated(const nlohmann::json& doc) {
  std::multiset<Key> keys;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X" || !e.contains("args") || !e["args"].is_object()) continue;
    const auto& a = e["args"];
    if (!a.contains("correlation") || !a["correlation"].is_number_integer()) continue;
    const int64_t stream =
        a.contains("stream") && a["stream"].is_number_integer() ? a["stream"].get<int64_t>() : -1;
    keys.emplace(e.value("name", ""), e["ts"].get<double>(), a["correlation"].get<int64_t>(),
                 stream);
  }
  return keys;
}

class ConvertRealTrace : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvertRealTrace, PassesTheStrictCheckAndKeepsCorrelationIdsAndStreams) {
  const fs::path file = kFixtures / GetParam();
  ImportOptions o;
  o.keep_origins = true;
  const Timeline t = load_trace(file, o);
  const std::string out = export_chrome_json(t);
  const auto check = check_trace_events(out);
  EXPECT_TRUE(check.problems.empty())
      << check.problems.size() << " problems, first: " << check.problems.front();
  // Slices of one stream that overlap without nesting (the B200 trace's kernels under
  // programmatic dependent launch), which Perfetto would drop, go to extra threads: none is left.
  const std::string source = testing::read_gz(file);
  EXPECT_EQ(check.x_overlaps, 0u) << check.first_overlap;
  const auto converted = correlated(nlohmann::json::parse(out));
  const auto original = correlated(nlohmann::json::parse(source));
  ASSERT_FALSE(original.empty());
  // meshscope writes µs with three decimals; compare after the same rounding.
  std::multiset<Key> original_rounded;
  for (auto [n, ts, c, s] : original) {
    original_rounded.emplace(n, std::round(ts * 1000) / 1000, c, s);
  }
  std::multiset<Key> converted_rounded;
  for (auto [n, ts, c, s] : converted) {
    converted_rounded.emplace(n, std::round(ts * 1000) / 1000, c, s);
  }
  EXPECT_EQ(converted_rounded, original_rounded);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ConvertRealTrace,
                         ::testing::Values("hta/a100_nccl_rank0_no_cpu_op.json.gz",
                                           "hta/b200_vllm_tp8_rank0_no_python.json.gz",
                                           "hta/h800_deepseek_v3_rank0.json.gz",
                                           "kineto_2rank_a100_nccl_rank0.json.gz"));

// A real Nsight Systems export (NVTX push/pop ranges around CUDA work): the converted file passes
// the strict check, so push/pop ranges nest on their threads, and kernels keep CUPTI's stream and
// correlation ids.
TEST(ConvertOrigins, RealNsightExportConvertsToAValidTraceWithCuptiIds) {
  testing::TempFile db(
      ".sqlite", testing::read_gz(kFixtures / "nsys/h100_fuser_report1_schema3.16.sqlite.gz"));
  ImportOptions o;
  o.keep_origins = true;
  ImportReport report;
  const Timeline t = load_trace(db.path(), o, &report);
  size_t nvtx = 0;
  for (const Span& s : t.spans) nvtx += s.kind == SpanKind::kAnnotation;
  EXPECT_EQ(nvtx, 639u);  // the file's NVTX_EVENTS rows, all push/pop (eventType 59)
  // Its one CUDA synchronization row is not read, and that is said (it had gone without a word).
  EXPECT_EQ(report.count(ImportWarning::kNsysTableNotRead), 1u);
  EXPECT_EQ(report.first_where[static_cast<size_t>(ImportWarning::kNsysTableNotRead)],
            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION 1 row");
  const std::string out = export_chrome_json(t);
  const auto check = check_trace_events(out);
  EXPECT_TRUE(check.problems.empty())
      << check.problems.size() << " problems, first: " << check.problems.front();
  EXPECT_EQ(check.x_overlaps, 0u) << check.first_overlap;  // NVTX ranges nest on their threads
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.path().c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::multiset<std::pair<int64_t, int64_t>> expected;  // (correlationId, streamId) per kernel
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(raw, "SELECT correlationId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL", -1,
                         &q, nullptr),
      SQLITE_OK);
  while (sqlite3_step(q) == SQLITE_ROW) {
    expected.emplace(sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1));
  }
  sqlite3_finalize(q);
  sqlite3_close(raw);
  std::multiset<std::pair<int64_t, int64_t>> got;
  const auto doc = nlohmann::json::parse(out);
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel") {
      got.emplace(e["args"]["correlation"].get<int64_t>(), e["args"]["stream"].get<int64_t>());
    }
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace meshscope::traces
