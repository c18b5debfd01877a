// import(export(T)) == T for meshscope's own traces, through the paths chrome_roundtrip_test does
// not take: span order as an executor records it (not sorted), gzip, the same JSON re-serialized
// by another writer (keys reordered, pretty-printed), and a trace big enough that events cross
// the reader's chunk boundaries many times.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/traces/import_test_util.h"
#include "tests/traces/timeline_equal.h"
#include "tests/traces/trace_fixtures.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using testing::expect_same_timeline;

// Spans in the order an executor appends them: interleaved across devices, not sorted; flows
// from each forward to the next stage's forward of the same microbatch; odd flops values.
Timeline executor_order_timeline(int stages, int microbatches) {
  Timeline t;
  for (int s = 0; s < stages; ++s) testing::add_device(t, s, MeshCoord{0, s, 0});
  std::vector<uint32_t> previous(static_cast<size_t>(microbatches), UINT32_MAX);
  for (int m = 0; m < microbatches; ++m) {
    for (int s = 0; s < stages; ++s) {
      const int64_t begin = (m + s) * 1000 + s * 7;
      const uint32_t f =
          testing::add(t, static_cast<uint16_t>(s), 0, SpanKind::kCompute, begin, begin + 999,
                       "F s" + std::to_string(s), Phase::kForward, static_cast<int16_t>(s), m);
      t.spans[f].flops = 1.0 / 3.0 * (m + 1);
      if (previous[static_cast<size_t>(m)] != UINT32_MAX)
        t.add_flow(previous[static_cast<size_t>(m)], f);
      previous[static_cast<size_t>(m)] = f;
      const uint32_t send = testing::add(t, static_cast<uint16_t>(s), 1, SpanKind::kSend,
                                         begin + 999, begin + 1100, "send");
      t.spans[send].bytes = 1 << 20;
    }
  }
  t.counters.push_back({1, std::string(kActivationBytesCounter), {{0, 0}, {500, 3.25e8}}});
  t.steps.push_back({0, (microbatches + stages) * 1000});
  t.metadata = {
      {"source", "cpu"}, {"schedule", "gpipe"}, {"microbatches", std::to_string(microbatches)}};
  return t;
}

TEST(ImportRoundTrip, ExecutorOrderIsKept) {
  const Timeline t = executor_order_timeline(3, 5);
  expect_same_timeline(t, load_trace_bytes(export_chrome_json(t), "order.json"));
}

TEST(ImportRoundTrip, ThroughGzip) {
  const Timeline t = executor_order_timeline(2, 4);
  expect_same_timeline(t,
                       load_trace_bytes(testing::gzip_bytes(export_chrome_json(t)), "t.json.gz"));
}

TEST(ImportRoundTrip, ThroughAnotherJsonWriter) {
  // nlohmann::json sorts keys and pretty-prints; numbers go through doubles and back.
  const Timeline t = executor_order_timeline(2, 3);
  const std::string rewritten = nlohmann::json::parse(export_chrome_json(t)).dump(2);
  expect_same_timeline(t, load_trace_bytes(rewritten, "rewritten.json"));
}

TEST(ImportRoundTrip, ATraceNamedGzIsWrittenCompressedAndReadBack) {
  // `convert --out t.json.gz` (and run, simulate) had written plain JSON under a gzip name.
  const Timeline t = executor_order_timeline(2, 2);
  testing::TempFile file(".json.gz");
  write_chrome_trace(t, file.path());
  std::ifstream in(file.path(), std::ios::binary);
  char magic[2] = {};
  in.read(magic, 2);
  EXPECT_EQ(static_cast<unsigned char>(magic[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(magic[1]), 0x8b);
  expect_same_timeline(t, load_trace(file.path()));
  EXPECT_LT(std::filesystem::file_size(file.path()), export_chrome_json(t).size());
}

TEST(ImportRoundTrip, OneRankTraceWithKinetoDistributedInfo) {
  // One rank of a run: the export says so in Kineto's distributedInfo (a member another writer
  // may put before the meshscope header); the import still takes devices from the header.
  Timeline t = executor_order_timeline(1, 3);
  t.devices[0].rank = 5;
  t.counters[0].device = 0;
  t.metadata["rank"] = "5";
  t.metadata["world_size"] = "8";
  const std::string json = export_chrome_json(t);
  const nlohmann::json doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc.at("distributedInfo").at("rank"), 5);
  EXPECT_EQ(doc.at("distributedInfo").at("world_size"), 8);
  expect_same_timeline(t, load_trace_bytes(json, "rank5.json"));
  expect_same_timeline(t, load_trace_bytes(doc.dump(2), "rank5-rewritten.json"));  // keys sorted
}

TEST(ImportRoundTrip, LargeTraceAcrossChunkBoundaries) {
  const Timeline t = executor_order_timeline(4, 20000);  // 160k spans, ~25 MB of JSON
  const std::string json = export_chrome_json(t);
  ASSERT_GT(json.size(), size_t{8} << 20);
  testing::TempFile file(".json", json);
  expect_same_timeline(t, load_trace(file.path()));
}

// A meshscope run's trace holds every rank's devices: two runs' traces read as the ranks of one
// job were merged into one run of both runs' devices, named alike ("rank 0" twice), and
// `calibrate` of their folder fitted one run's workload to both. Each is read alone.
TEST(ImportRoundTrip, TwoRunsTracesAreNotReadAsTheRanksOfOneJob) {
  const Timeline a = executor_order_timeline(2, 2);
  const Timeline b = executor_order_timeline(3, 2);
  testing::TempFile fa(".json", export_chrome_json(a));
  testing::TempFile fb(".json", export_chrome_json(b));
  const std::vector<std::filesystem::path> files = {fa.path(), fb.path()};
  try {
    load_traces(files);
    FAIL() << "merged";
  } catch (const ImportError& e) {
    EXPECT_EQ(std::string(e.what()),
              fa.path().string() +
                  ": holds the devices of 2 ranks (a whole run's trace): read it alone, not as "
                  "one rank of several files");
  }
  // Alone, each reads whole.
  const std::vector<std::filesystem::path> one = {fb.path()};
  EXPECT_EQ(load_traces(one).devices.size(), 3u);
}

TEST(ImportRoundTrip, AHeaderStepThatEndsBeforeItBeginsOrIsNoJsonIsNamed) {
  // A step whose end is before its begin read as "steps: 0" with exit 0; a NaN in the header as
  // "not a JSON object".
  const auto refusal = [](const std::string& header) -> std::string {
    try {
      load_trace_bytes(R"({"meshscope":)" + header + R"(,"traceEvents":[)" +
                           R"({"ph":"X","name":"k","pid":0,"tid":0,"ts":1,"dur":1}]})",
                       "t.json");
      return "loaded";
    } catch (const ImportError& e) {
      return e.what();
    }
  };
  EXPECT_EQ(refusal(R"({"version":2,"steps":[{"begin_ns":5,"end_ns":1}]})"),
            "t.json: byte 1: meshscope header: step 0 ends (1 ns) before it begins (5 ns)");
  EXPECT_NE(refusal(R"({"version":2,"steps":[{"begin_ns":NaN,"end_ns":1}]})")
                .find("t.json: byte 1: meshscope header: not valid JSON: parse error at line 1"),
            std::string::npos);
  // A number past a double is the parser's out_of_range, not its parse_error: refused the same
  // way (it ended the process; the fuzzer's reproducer).
  EXPECT_NE(refusal(R"({"version":2,"steps":[{"begin_ns":1e3080,"end_ns":9000}]})")
                .find("t.json: byte 1: meshscope header: not valid JSON: number overflow"),
            std::string::npos)
      << refusal(R"({"version":2,"steps":[{"begin_ns":1e3080,"end_ns":9000}]})");
  EXPECT_EQ(refusal(R"({"version":2,"steps":[{"begin_ns":1,"end_ns":5}]})"), "loaded");
}

}  // namespace
}  // namespace meshscope::traces
