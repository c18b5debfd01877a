// import(export(T)) == T for meshscope's own traces (issue 6, round trip).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/traces/timeline_equal.h"
#include "tests/traces/trace_fixtures.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using testing::add;

using testing::expect_same_timeline;

// Everything a meshscope trace can hold: every span kind and phase, nesting on one lane, a lane
// and a device without spans, odd names, fractional flops, negative and large times.
Timeline rich_timeline() {
  Timeline t = testing::gpipe(3, 4, 1234, 2345);
  for (Span& s : t.spans) s.flops = 1.234567891e9 * (s.stage + 1);
  const uint16_t gpu = t.add_device(7, "GPU 0 \"quoted\" · ünïcode", MeshCoord{1, -1, 2});
  t.add_lane(gpu, "stream 7", LaneKind::kCompute);
  t.add_lane(gpu, "stream 13", LaneKind::kComm);
  t.add_lane(gpu, "unused", LaneKind::kComm);
  t.add_lane(gpu, "thread 1", LaneKind::kHost);
  t.add_device(9, "no spans");
  const uint32_t launch = add(t, gpu, 3, SpanKind::kHost, -5000, -4000, "cudaLaunchKernel");
  add(t, gpu, 0, SpanKind::kAnnotation, -3000, 9000000000123, "ProfilerStep#1\ttab\\slash");
  const uint32_t kernel =
      add(t, gpu, 0, SpanKind::kCompute, -3000, -1, "gemm", Phase::kInputGrad, 2, 5);
  add(t, gpu, 0, SpanKind::kCompute, 10, 10, "zero length", Phase::kWeightGrad, 0, 0);
  add(t, gpu, 0, SpanKind::kMemcpy, 20, 30, "Memcpy DtoD");
  add(t, gpu, 0, SpanKind::kMemset, 30, 31, "Memset");
  add(t, gpu, 0, SpanKind::kCompute, 40, 50, "sgd", Phase::kOptimizer);
  const uint32_t ar = add(t, gpu, 1, SpanKind::kCollective, 100, 900, "ncclAllReduce");
  t.spans[ar].bytes = int64_t{1} << 40;
  t.set_collective(ar, Collective{.op = CollectiveOp::kReduceScatter,
                                  .group = GroupKind::kTp,
                                  .bytes = int64_t{1} << 41,
                                  .algorithm = CollectiveAlgorithm::kRing});
  // A flow back in time: its target begins before its source (re-exported Kineto flows bound
  // to enclosing slices do this).
  t.add_flow(ar, add(t, gpu, 3, SpanKind::kAnnotation, 50, 2000, "enclosing range"));
  const uint32_t send = add(t, 0, 1, SpanKind::kSend, 1500, 1600, "SEND_F s0 mb0");
  const uint32_t recv = add(t, 1, 1, SpanKind::kRecv, 1700, 1800, "RECV_F s1 mb0");
  t.set_wait(recv, 650);  // posted at 1050, began once the data was there
  t.set_wait(ar, 3);
  t.spans[send].bytes = t.spans[recv].bytes = 4096;
  t.add_flow(launch, kernel);
  t.add_flow(send, recv);
  t.counters.push_back(
      {0, std::string(kActivationBytesCounter), {{0, 0}, {1234, 1048576}, {5000, 0.5}}});
  t.counters.push_back({gpu, "memory_reserved", {{-10, 1e15}}});
  t.steps.push_back({-5000, 0});
  t.metadata = {{"source", "sim"}, {"schedule", "gpipe"}, {"note", "line1\nline2 · µs"}};
  t.run = testing::rich_run();
  add_idle_spans(t);
  t.sort_spans();  // the importer returns spans in canonical order
  return t;
}

TEST(ChromeRoundTrip, ImportOfExportIsTheSameTimeline) {
  const Timeline t = rich_timeline();
  const std::string json = export_chrome_json(t);
  const Timeline back = load_trace_bytes(json, "roundtrip.json");
  expect_same_timeline(t, back);
}

TEST(ChromeRoundTrip, RunDescriptorAndCollectivesUseStableNames) {
  const Timeline t = rich_timeline();
  const nlohmann::json j = nlohmann::json::parse(export_chrome_json(t));
  const nlohmann::json& run = j.at("meshscope_run");
  EXPECT_EQ(run.at("source"), "cuda-virtual");
  EXPECT_EQ(run.at("mesh"), (nlohmann::json{{"dp", 2}, {"pp", 3}, {"tp", 4}}));
  EXPECT_EQ(run.at("family"), "interleaved");
  EXPECT_EQ(run.at("virtual_stages"), 2);
  EXPECT_EQ(run.at("workload").at("kind"), "gpt");
  EXPECT_EQ(run.at("workload").at("seq"), 2048);
  EXPECT_EQ(run.at("workload").at("experts"), 64);
  EXPECT_EQ(run.at("workload").at("top_k"), 2);
  EXPECT_EQ(run.at("workload").at("capacity_factor"), 1.25);
  EXPECT_EQ(run.at("workload").at("ep"), 8);
  int with_collective = 0;
  for (const auto& ev : j.at("traceEvents")) {
    if (!ev.contains("args") || !ev["args"].contains("collective_op")) continue;
    ++with_collective;
    EXPECT_EQ(ev["name"], "ncclAllReduce");
    EXPECT_EQ(ev["args"]["collective_op"], "reduce_scatter");
    EXPECT_EQ(ev["args"]["collective_group"], "tp");
    EXPECT_EQ(ev["args"]["collective_bytes"], int64_t{1} << 41);
    EXPECT_EQ(ev["args"]["collective_algorithm"], "ring");
  }
  EXPECT_EQ(with_collective, 1);
}

TEST(ChromeRoundTrip, NoFlowEndsBeforeItStarts) {
  // Perfetto reads events in time order and drops a flow whose "f" comes before its "s": the
  // flow back in time above (a target beginning before its source) ends at its source's begin.
  const Timeline t = rich_timeline();
  const nlohmann::json j = nlohmann::json::parse(export_chrome_json(t));
  std::map<int64_t, double> starts, ends;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    if (ph == "s") starts[e.at("id").get<int64_t>()] = e.at("ts").get<double>();
    if (ph == "f") ends[e.at("id").get<int64_t>()] = e.at("ts").get<double>();
  }
  ASSERT_EQ(starts.size(), t.flows.size());
  ASSERT_EQ(ends.size(), t.flows.size());
  size_t moved = 0;
  for (const auto& [id, ts] : ends) {
    EXPECT_GE(ts, starts.at(id)) << "flow " << id;
    const Span& to = t.spans[t.flows[static_cast<size_t>(id)].to];
    EXPECT_GE(ts * 1000, static_cast<double>(to.begin_ns) - 0.5) << "flow " << id;
    EXPECT_LE(ts * 1000, static_cast<double>(to.end_ns) + 0.5) << "flow " << id;
    if (ts * 1000 > static_cast<double>(to.begin_ns) + 0.5) ++moved;
  }
  EXPECT_GE(moved, 1u);
}

TEST(ChromeRoundTrip, SlicesThatOverlapWithoutNestingGoToAnExtraThread) {
  // Perfetto drops a slice that begins inside another of its thread and ends after it: the
  // second kernel goes to an extra thread of its device, the third (inside the first) stays.
  Timeline t;
  const uint16_t d = t.add_device(0, "GPU 0");
  t.add_lane(d, "stream 7", LaneKind::kCompute);
  const auto kernel = [&](int64_t b, int64_t e, const char* name) {
    Span s{.begin_ns = b, .end_ns = e, .device = d};
    s.name = t.strings.intern(name);
    return t.add_span(s);
  };
  kernel(0, 100, "a");
  kernel(90, 150, "b");  // overlaps a without nesting
  kernel(10, 20, "c");   // inside a
  t.sort_spans();
  const nlohmann::json j = nlohmann::json::parse(export_chrome_json(t));
  std::map<std::string, int64_t> tid;
  std::string extra_name;
  for (const auto& e : j.at("traceEvents")) {
    if (e.value("ph", "") == "X") tid[e.at("name")] = e.at("tid").get<int64_t>();
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" &&
        e.at("tid").get<int64_t>() == 2)
      extra_name = e.at("args").at("name");
  }
  EXPECT_EQ(tid.at("a"), 1);  // lane 0 is tid 1 (chrome_export.cpp, pid_tid)
  EXPECT_EQ(tid.at("c"), 1);
  EXPECT_EQ(tid.at("b"), 2);
  EXPECT_EQ(extra_name, "stream 7 (overlapping 1)");
  // Read back, every slice is there, with its times, on the lane it came from: the extra thread
  // names that lane, and the importer folds it back (no lane of its own).
  const Timeline back = load_trace_bytes(export_chrome_json(t), "overlap.json");
  expect_same_timeline(t, back);
  ASSERT_EQ(back.devices.size(), 1u);
  EXPECT_EQ(back.devices[0].lanes.size(), 1u);
  ASSERT_EQ(back.spans.size(), 3u);
  int64_t busy = 0;
  for (const Span& s : back.spans) {
    busy += s.duration_ns();
    EXPECT_EQ(s.lane, 0);
  }
  EXPECT_EQ(busy, 100 + 60 + 10);
}

TEST(ChromeRoundTrip, ABadRunDescriptorIsAnErrorNamingTheField) {
  std::string json = export_chrome_json(rich_timeline());
  const std::string gpt = "\"workload\":{\"kind\":\"gpt\"";
  const auto at = json.find(gpt);
  ASSERT_NE(at, std::string::npos);
  json.replace(at, gpt.size(), "\"workload\":{\"kind\":\"rnn\"");
  try {
    load_trace_bytes(json, "bad.json");
    FAIL() << "accepted model kind rnn";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("meshscope_run.workload.kind"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

TEST(ChromeRoundTrip, ThroughAFileToo) {
  const Timeline t = rich_timeline();
  const auto path = std::filesystem::temp_directory_path() / "meshscope_roundtrip_test.json";
  write_chrome_trace(t, path);
  const Timeline back = load_trace(path);
  std::filesystem::remove(path);
  expect_same_timeline(t, back);
  // And the analysis of the imported trace is the analysis of the original.
  const TimelineAnalysis a = analyze(t);
  const TimelineAnalysis b = analyze(back);
  EXPECT_EQ(a.idle_ns, b.idle_ns);
  EXPECT_EQ(a.busy_ns, b.busy_ns);
  EXPECT_DOUBLE_EQ(a.bubble_fraction, b.bubble_fraction);
}

TEST(ChromeRoundTrip, KindsComeFromArgsNotFromKinetoCategories) {
  // Kineto's categories merge kinds (compute, send, recv and collective are all "kernel"); the
  // round trip above is exact only because the importer reads args.kind. Swap two spans' kinds
  // in the file and the import must follow the args.
  const Timeline t = rich_timeline();
  nlohmann::json doc = nlohmann::json::parse(export_chrome_json(t));
  size_t changed = 0;
  for (auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("cat") != "kernel") continue;
    auto& kind = e.at("args").at("kind");
    if (kind != "send" && kind != "recv") continue;
    kind = kind == "send" ? "recv" : "send";
    ++changed;
  }
  ASSERT_EQ(changed, 2u);
  const Timeline back = load_trace_bytes(doc.dump(), "swapped.json");
  size_t sends = 0;
  for (size_t i = 0; i < t.spans.size(); ++i) {
    if (t.spans[i].kind == SpanKind::kSend) {
      EXPECT_EQ(back.spans[i].kind, SpanKind::kRecv);
      ++sends;
    }
  }
  EXPECT_EQ(sends, 1u);
}

TEST(ChromeRoundTrip, Version1FilesStillRead) {
  // Layout version 1 wrote cat = the span kind and no Kineto args; files made then still open.
  const Timeline t = rich_timeline();
  nlohmann::json doc = nlohmann::json::parse(export_chrome_json(t));
  doc.at("meshscope").at("version") = 1;
  doc.erase("distributedInfo");
  for (auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    auto& args = e.at("args");
    e.at("cat") = args.at("kind");
    for (const char* k : {"kind", "device", "stream", "correlation"}) args.erase(k);
    if (args.empty()) e.erase("args");
  }
  expect_same_timeline(t, load_trace_bytes(doc.dump(), "v1.json"));
}

}  // namespace
}  // namespace meshscope::traces
