#include "traces/chrome_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/traces/trace_fixtures.h"

namespace meshscope::traces {
namespace {

using nlohmann::json;
using testing::add;

struct Sample {
  Timeline t;
  uint32_t fwd = 0, send = 0, recv = 0, idle = 0, bare = 0;
};

Sample sample() {
  Sample s;
  Timeline& t = s.t;
  // Added out of rank order: the sort index must follow ranks, the pid the device index.
  const uint16_t d0 = t.add_device(3, "rank 3 · dp0 pp1 tp0", MeshCoord{0, 1, 0});
  t.add_lane(d0, "compute", LaneKind::kCompute);
  t.add_lane(d0, "comm", LaneKind::kComm);
  const uint16_t d1 = t.add_device(1, "rank 1 · dp0 pp0 tp1", MeshCoord{0, 0, 1});
  t.add_lane(d1, "compute", LaneKind::kCompute);
  t.add_lane(d1, "comm", LaneKind::kComm);
  t.add_lane(d1, "host", LaneKind::kHost);
  s.fwd = add(t, d0, 0, SpanKind::kCompute, 1234567, 1239567, "F s1 mb2", Phase::kForward, 1, 2);
  t.spans[s.fwd].flops = 1.5e9;
  s.send = add(t, d0, 1, SpanKind::kSend, 1239567, 1240001, "SEND_F s1 mb2");
  t.spans[s.send].bytes = 4096;
  s.recv = add(t, d1, 1, SpanKind::kRecv, 1239999, 1240100, "RECV_F s2 mb2");
  t.spans[s.recv].bytes = 4096;
  s.idle = add(t, d1, 0, SpanKind::kIdle, -5, 1239999, "idle 1.240 ms");
  s.bare = add(t, d1, 2, SpanKind::kHost, 7, 7, "quote\" back\\ nl\n ctl\x01 bad\xff end");
  t.add_flow(s.send, s.recv);
  t.counters.push_back(
      {d0, std::string(kActivationBytesCounter), {{1234567, 0}, {1239567, 65536}}});
  t.metadata = {{"schedule", "1f1b"}, {"mesh", "dp=1 pp=2 tp=2"}};
  t.steps = {{-5, 1240100}};
  return s;
}

std::vector<json> events_with(const json& doc, const std::string& ph,
                              const std::string& name = "") {
  std::vector<json> out;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") == ph && (name.empty() || e.at("name") == name)) out.push_back(e);
  }
  return out;
}

TEST(ChromeExport, TimesAreMicrosecondsWithExactNanosecondFraction) {
  EXPECT_EQ(format_chrome_us(1234567), "1234.567");
  EXPECT_EQ(format_chrome_us(5000), "5");  // whole: an integer, which Perfetto reads exactly
  EXPECT_EQ(format_chrome_us(7), "0.007");
  EXPECT_EQ(format_chrome_us(-5), "-0.005");
  EXPECT_EQ(format_chrome_us(0), "0");
  EXPECT_EQ(format_chrome_us(-7000), "-7");
  EXPECT_EQ(format_chrome_us(1740461679471472000), "1740461679471472");  // Kineto's epoch µs
  // Beyond 2^53 ns a double would round; the integer path must not.
  EXPECT_EQ(format_chrome_us(9007199254740993), "9007199254740.993");
  EXPECT_EQ(format_chrome_us(INT64_MIN), "-9223372036854775.808");
  const std::string text = export_chrome_json(sample().t);
  EXPECT_NE(text.find("\"ts\":1234.567,\"dur\":5,"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":-0.005,\"dur\":1240.004"), std::string::npos);
}

TEST(ChromeExport, TopLevelObjectCarriesUnitMetadataAndSteps) {
  const json doc = json::parse(export_chrome_json(sample().t));
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  const json& m = doc.at("meshscope");
  EXPECT_EQ(m.at("version"), kChromeFormatVersion);
  EXPECT_EQ(m.at("metadata").at("schedule"), "1f1b");
  EXPECT_EQ(m.at("metadata").at("mesh"), "dp=1 pp=2 tp=2");
  ASSERT_EQ(m.at("steps").size(), 1u);
  EXPECT_EQ(m.at("steps")[0].at("begin_ns"), -5);
  EXPECT_EQ(m.at("steps")[0].at("end_ns"), 1240100);
}

TEST(ChromeExport, ProcessPerDeviceThreadPerLaneWithSortIndices) {
  const json doc = json::parse(export_chrome_json(sample().t));
  const auto names = events_with(doc, "M", "process_name");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0].at("pid"), 0);
  EXPECT_EQ(names[0].at("args").at("name"), "rank 3 · dp0 pp1 tp0");
  EXPECT_EQ(names[0].at("args").at("rank"), 3);
  EXPECT_EQ(names[0].at("args").at("dp"), 0);
  EXPECT_EQ(names[0].at("args").at("pp"), 1);
  EXPECT_EQ(names[0].at("args").at("tp"), 0);
  EXPECT_EQ(names[1].at("pid"), 1);
  EXPECT_EQ(names[1].at("args").at("tp"), 1);

  const auto sort = events_with(doc, "M", "process_sort_index");
  ASSERT_EQ(sort.size(), 2u);
  EXPECT_EQ(sort[0].at("pid"), 0);
  EXPECT_EQ(sort[0].at("args").at("sort_index"), 1);  // rank 3 after rank 1
  EXPECT_EQ(sort[1].at("args").at("sort_index"), 0);

  const auto threads = events_with(doc, "M", "thread_name");
  ASSERT_EQ(threads.size(), 5u);
  EXPECT_EQ(threads[3].at("pid"), 1);
  // Lane l is tid l + 1: Perfetto moves tid 0 to tid == pid (json_trace_tokenizer.cc), which
  // folded device 1's lane 0 into its lane 1.
  EXPECT_EQ(threads[3].at("tid"), 2);
  for (const json& e : doc.at("traceEvents")) {
    if (e.contains("tid")) {
      EXPECT_NE(e.at("tid"), 0) << e.dump();
    }
  }
  EXPECT_EQ(threads[3].at("args").at("name"), "comm");
  EXPECT_EQ(threads[3].at("args").at("lane_kind"), "comm");
  EXPECT_EQ(threads[4].at("args").at("lane_kind"), "host");
  const auto tsort = events_with(doc, "M", "thread_sort_index");
  ASSERT_EQ(tsort.size(), 5u);
  EXPECT_EQ(tsort[4].at("tid"), 3);
  EXPECT_EQ(tsort[4].at("args").at("sort_index"), 2);
}

TEST(ChromeExport, CompleteEventsInSpanOrderWithArgsWhereSet) {
  const Sample s = sample();
  const json doc = json::parse(export_chrome_json(s.t));
  const auto x = events_with(doc, "X");
  ASSERT_EQ(x.size(), s.t.spans.size());
  const json& fwd = x[s.fwd];
  EXPECT_EQ(fwd.at("cat"), "kernel");
  EXPECT_EQ(fwd.at("args").at("kind"), "compute");
  EXPECT_EQ(fwd.at("name"), "F s1 mb2");
  EXPECT_EQ(fwd.at("pid"), 0);
  EXPECT_EQ(fwd.at("tid"), 1);
  EXPECT_DOUBLE_EQ(fwd.at("ts").get<double>(), 1234.567);
  EXPECT_DOUBLE_EQ(fwd.at("dur").get<double>(), 5.0);
  EXPECT_EQ(fwd.at("args").at("stage"), 1);
  EXPECT_EQ(fwd.at("args").at("microbatch"), 2);
  EXPECT_EQ(fwd.at("args").at("phase"), "forward");
  EXPECT_EQ(fwd.at("args").at("flops").get<double>(), 1.5e9);
  EXPECT_FALSE(fwd.at("args").contains("bytes"));

  const json& send = x[s.send];
  EXPECT_EQ(send.at("cat"), "kernel");
  EXPECT_EQ(send.at("args").at("kind"), "send");
  EXPECT_EQ(send.at("tid"), 2);
  EXPECT_EQ(send.at("args").at("bytes"), 4096);
  EXPECT_FALSE(send.at("args").contains("stage"));
  EXPECT_FALSE(send.at("args").contains("phase"));

  const json& idle = x[s.idle];  // bubbles are their own events so Perfetto shows them
  EXPECT_EQ(idle.at("cat"), "idle");
  EXPECT_EQ(idle.at("name"), "idle 1.240 ms");
  EXPECT_EQ(idle.at("pid"), 1);
  EXPECT_EQ(idle.at("args"), json({{"kind", "idle"}}));

  const json& bare = x[s.bare];
  EXPECT_EQ(bare.at("cat"), "cpu_op");
  EXPECT_EQ(bare.at("args"), json({{"kind", "host"}}));
  EXPECT_EQ(bare.at("name"), "quote\" back\\ nl\n ctl\x01 bad\xEF\xBF\xBD end");
  EXPECT_EQ(bare.at("dur").get<double>(), 0.0);
}

// Kineto's (PyTorch profiler's) names, so tools made for PyTorch traces read ours (issue 6,
// part 6; mapping in chrome_kineto.h).
TEST(ChromeExport, KinetoCategoriesAndArgs) {
  Timeline t;
  const uint16_t gpu = t.add_device(0, "GPU 0");
  t.add_lane(gpu, "stream 7", LaneKind::kCompute);
  t.add_lane(gpu, "comm", LaneKind::kComm);
  t.add_lane(gpu, "thread 12", LaneKind::kHost);
  struct Case {
    uint16_t lane;
    SpanKind kind;
    const char* name;
    const char* cat;
  };
  const std::vector<Case> cases = {
      {0, SpanKind::kCompute, "gemm", "kernel"},
      {1, SpanKind::kSend, "SEND_F s0 mb0", "kernel"},
      {1, SpanKind::kRecv, "RECV_B s0 mb0", "kernel"},
      {1, SpanKind::kCollective, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel"},
      {0, SpanKind::kMemcpy, "Memcpy DtoD", "gpu_memcpy"},
      {0, SpanKind::kMemset, "Memset", "gpu_memset"},
      {0, SpanKind::kIdle, "idle 5 ns", "idle"},
      {2, SpanKind::kHost, "cudaLaunchKernel", "cuda_runtime"},
      {2, SpanKind::kHost, "cuLaunchKernelEx", "cuda_driver"},
      {2, SpanKind::kHost, "aten::mm", "cpu_op"},
      {2, SpanKind::kHost, "cudnn_convolution", "cpu_op"},
      {2, SpanKind::kAnnotation, "ProfilerStep#3", "user_annotation"},
      {0, SpanKind::kAnnotation, "forward", "gpu_user_annotation"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    add(t, gpu, cases[i].lane, cases[i].kind, int64_t(i) * 10, int64_t(i) * 10 + 5, cases[i].name);
  }
  t.add_flow(7, 0);  // cudaLaunchKernel -> gemm: a launch, Kineto's ac2g
  t.add_flow(1, 2);  // send -> recv: not a launch
  const json doc = json::parse(export_chrome_json(t));
  const auto x = events_with(doc, "X");
  ASSERT_EQ(x.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& e = x[i];
    EXPECT_EQ(e.at("cat"), cases[i].cat) << cases[i].name;
    EXPECT_EQ(e.at("args").at("kind"), name(cases[i].kind)) << cases[i].name;
    // HTA takes events with an integer args.stream as GPU work: device work only.
    const bool device_work = is_device_activity(cases[i].kind);
    EXPECT_EQ(e.at("args").contains("stream"), device_work) << cases[i].name;
    EXPECT_EQ(e.at("args").contains("device"), device_work) << cases[i].name;
    if (device_work) {
      EXPECT_EQ(e.at("args").at("device"), gpu) << cases[i].name;
    }
  }
  EXPECT_EQ(x[0].at("args").at("stream"), 7);  // from the lane's name, as Kineto's was
  EXPECT_EQ(x[1].at("args").at("stream"), 1);  // else the lane index
  // The launch's two ends share Kineto's correlation id, which is its ac2g flow's id.
  const auto starts = events_with(doc, "s");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0].at("cat"), "ac2g");
  EXPECT_EQ(x[7].at("args").at("correlation"), starts[0].at("id"));
  EXPECT_EQ(x[0].at("args").at("correlation"), starts[0].at("id"));
  EXPECT_EQ(starts[1].at("cat"), "p2p");
  EXPECT_FALSE(x[1].at("args").contains("correlation"));
  EXPECT_FALSE(x[2].at("args").contains("correlation"));
}

TEST(ChromeExport, DistributedInfoOnlyWhenTheTraceIsOneRanks) {
  // Several ranks (sample(): ranks 3 and 1): no distributedInfo.
  EXPECT_FALSE(json::parse(export_chrome_json(sample().t)).contains("distributedInfo"));
  // One rank of a meshscope run (devices placed in the mesh).
  Timeline run;
  testing::add_device(run, 2, MeshCoord{0, 2, 0});
  EXPECT_EQ(json::parse(export_chrome_json(run)).at("distributedInfo"), json({{"rank", 2}}));
  // An imported per-rank trace: metadata says the rank and the world size.
  Timeline imported;
  imported.add_device(1, "rank 1 · GPU 0");
  imported.add_device(1, "rank 1 · host");
  imported.metadata = {{"rank", "1"}, {"world_size", "8"}};
  const std::string text = export_chrome_json(imported);
  EXPECT_EQ(json::parse(text).at("distributedInfo"), json({{"rank", 1}, {"world_size", 8}}));
  // HTA reads the rank with the pattern "rank":\s+(\d+), the space Kineto writes: without it,
  // every converted rank would be rank 0 to HTA.
  EXPECT_NE(text.find("\"distributedInfo\": {\"rank\": 1, \"world_size\": 8}"), std::string::npos)
      << text;
  // Devices of another rank than metadata says, or nobody's rank: none.
  imported.devices[1].rank = 0;
  EXPECT_FALSE(json::parse(export_chrome_json(imported)).contains("distributedInfo"));
  Timeline unknown;
  unknown.add_device(0, "pid 4242");
  EXPECT_FALSE(json::parse(export_chrome_json(unknown)).contains("distributedInfo"));
}

TEST(ChromeExport, FlowFromSendToRecvBindsToEnclosingSlices) {
  const Sample s = sample();
  const json doc = json::parse(export_chrome_json(s.t));
  const auto starts = events_with(doc, "s");
  const auto finishes = events_with(doc, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  const json& a = starts[0];
  const json& b = finishes[0];
  EXPECT_EQ(a.at("id"), b.at("id"));
  EXPECT_EQ(a.at("cat"), "p2p");
  EXPECT_EQ(b.at("bp"), "e");
  EXPECT_EQ(a.at("pid"), 0);
  EXPECT_EQ(a.at("tid"), 2);
  EXPECT_DOUBLE_EQ(a.at("ts").get<double>(), 1239.567);
  EXPECT_EQ(a.at("args").at("span"), s.send);
  EXPECT_EQ(b.at("pid"), 1);
  EXPECT_EQ(b.at("tid"), 2);
  EXPECT_DOUBLE_EQ(b.at("ts").get<double>(), 1239.999);
  EXPECT_EQ(b.at("args").at("span"), s.recv);
}

TEST(ChromeExport, CountersAreCounterEvents) {
  const json doc = json::parse(export_chrome_json(sample().t));
  const auto c = events_with(doc, "C");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].at("name"), "activation_bytes");
  EXPECT_EQ(c[1].at("pid"), 0);
  EXPECT_DOUBLE_EQ(c[1].at("ts").get<double>(), 1239.567);
  EXPECT_EQ(c[1].at("args").at("value"), 65536);
}

TEST(ChromeExport, RefusesTimelinesItCannotWriteFaithfully) {
  Sample bad_lane = sample();
  bad_lane.t.spans[0].lane = 9;
  EXPECT_THROW(export_chrome_json(bad_lane.t), std::invalid_argument);
  Sample backwards = sample();
  backwards.t.spans[1].end_ns = backwards.t.spans[1].begin_ns - 1;
  try {
    export_chrome_json(backwards.t);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("span 1"), std::string::npos) << e.what();
  }
  Sample bad_flow = sample();
  bad_flow.t.add_flow(0, 99);
  EXPECT_THROW(export_chrome_json(bad_flow.t), std::invalid_argument);
}

TEST(ChromeExport, FailedExportLeavesThePreviousFileIntact) {
  const auto dir = std::filesystem::temp_directory_path() / "meshscope_chrome_export_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = dir / "run.json";
  Sample good = sample();
  write_chrome_trace(good.t, path);
  const json first = json::parse(std::ifstream(path));
  EXPECT_EQ(first.at("traceEvents").size(), events_with(first, "M").size() + 5 + 2 + 2);

  Sample bad = sample();
  for (int i = 0; i < 50000; ++i) add(bad.t, 0, 0, SpanKind::kCompute, i, i + 1, "x");
  bad.t.spans.back().end_ns = -1;  // fails after more than a chunk has been written
  EXPECT_THROW(write_chrome_trace(bad.t, path), std::invalid_argument);
  EXPECT_EQ(json::parse(std::ifstream(path)), first);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);  // no temp left
  std::filesystem::remove_all(dir);
}

TEST(ChromeExport, StreamsInBoundedChunks) {
  Timeline t;
  const uint16_t d = testing::add_device(t, 0);
  for (int i = 0; i < 100000; ++i) {
    add(t, d, 0, SpanKind::kCompute, int64_t{i} * 10, int64_t{i} * 10 + 5,
        "F s0 mb" + std::to_string(i % 8));
  }
  size_t chunks = 0;
  size_t largest = 0;
  std::string all;
  write_chrome_trace(t, [&](std::string_view c) {
    ++chunks;
    largest = std::max(largest, c.size());
    all.append(c);
  });
  EXPECT_GT(chunks, 2u);
  EXPECT_LT(largest, size_t{2} << 20);
  EXPECT_EQ(json::parse(all).at("traceEvents").size(), 2u + 4u + 100000u);
}

}  // namespace
}  // namespace meshscope::traces
