// Kineto / Chrome JSON semantics: where events land (GPU devices and stream lanes, host
// processes and threads), what kind they become (NCCL -> communication, memcpy, memset, host,
// annotations), flows bound to spans, ProfilerStep#N -> steps, distributedInfo, gzip.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/traces/import_test_util.h"
#include "traces/import/kineto_synth.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using testing::trace_of;

const Span* find_span(const Timeline& t, std::string_view name) {
  for (const Span& s : t.spans) {
    if (t.span_name(s) == name) return &s;
  }
  return nullptr;
}

int64_t count_kind(const Timeline& t, SpanKind k) {
  return std::count_if(t.spans.begin(), t.spans.end(), [&](const Span& s) { return s.kind == k; });
}

TEST(ChromeImport, GpuEventsGoToOneDevicePerGpuWithALanePerStream) {
  const Timeline t = load_trace_bytes(
      trace_of({
          R"J({"ph":"X","cat":"kernel","name":"gemm","pid":1,"tid":13,"ts":10,"dur":5,)J"
          R"J("args":{"device":1,"stream":13}})J",
          R"J({"ph":"X","cat":"kernel","name":"relu","pid":0,"tid":7,"ts":1,"dur":2,)J"
          R"J("args":{"device":0,"stream":7}})J",
          R"J({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":20,"ts":3,)J"
          R"J("dur":1,"args":{"device":0,"stream":20,"bytes":4096}})J",
          R"J({"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":4,)J"
          R"J("dur":1,"args":{"device":0,"stream":7,"bytes":64}})J",
          R"J({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":900,"tid":901,"ts":0,"dur":9})J",
      }),
      "gpu.json");
  ASSERT_EQ(t.devices.size(), 3u);
  EXPECT_EQ(t.devices[0].name, "GPU 0");
  EXPECT_EQ(t.devices[1].name, "GPU 1");
  EXPECT_EQ(t.devices[2].name, "host");
  ASSERT_EQ(t.devices[0].lanes.size(), 2u);
  EXPECT_EQ(t.devices[0].lanes[0].name, "stream 7");
  EXPECT_EQ(t.devices[0].lanes[1].name, "stream 20");
  EXPECT_EQ(t.devices[2].lanes[0].kind, LaneKind::kHost);

  const Span* gemm = find_span(t, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->device, 1);
  EXPECT_EQ(gemm->kind, SpanKind::kCompute);
  EXPECT_EQ(gemm->begin_ns, 10000);
  EXPECT_EQ(gemm->end_ns, 15000);
  const Span* copy = find_span(t, "Memcpy HtoD");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->kind, SpanKind::kMemcpy);
  EXPECT_EQ(copy->bytes, 4096);
  EXPECT_EQ(copy->lane, 1);
  EXPECT_EQ(find_span(t, "Memset (Device)")->kind, SpanKind::kMemset);
  EXPECT_EQ(find_span(t, "aten::mm")->kind, SpanKind::kHost);
  EXPECT_EQ(t.metadata.at("source"), "kineto");
  EXPECT_TRUE(std::is_sorted(t.spans.begin(), t.spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.device, a.lane, a.begin_ns) < std::tie(b.device, b.lane, b.begin_ns);
  }));
}

TEST(ChromeImport, OlderCapitalisedCategoriesMeanTheSame) {
  const Timeline t = load_trace_bytes(
      trace_of({
          R"J({"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1})J",
          R"J({"ph":"X","cat":"Memcpy","name":"m","pid":0,"tid":7,"ts":3,"dur":1})J",
          R"J({"ph":"X","cat":"Memset","name":"z","pid":0,"tid":7,"ts":5,"dur":1})J",
          R"J({"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":50,"tid":51,"ts":0,"dur":1})J",
          R"J({"ph":"X","cat":"Operator","name":"aten::add","pid":50,"tid":51,"ts":0,"dur":2})J",
      }),
      "old.json");
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "GPU 0");
  EXPECT_EQ(find_span(t, "k")->kind, SpanKind::kCompute);
  EXPECT_EQ(find_span(t, "m")->kind, SpanKind::kMemcpy);
  EXPECT_EQ(find_span(t, "z")->kind, SpanKind::kMemset);
  EXPECT_EQ(find_span(t, "cudaLaunchKernel")->device, 1);
  EXPECT_EQ(find_span(t, "aten::add")->kind, SpanKind::kHost);
}

TEST(ChromeImport, NcclKernelsBecomeCommunicationWithTheirBytes) {
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({
          R"J({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)","pid":0,)J"
          R"J("tid":40,"ts":1,"dur":5,"args":{"stream":40,"In msg nelems":1000,)J"
          R"J("Out msg nelems":1000,"dtype":"Float"}})J",
          R"J({"ph":"X","cat":"kernel","name":"ncclKernel_AllGather_RING_LL_Sum_int8_t()",)J"
          R"J("pid":0,"tid":40,"ts":10,"dur":5,"args":{"In msg nelems":10,"Out msg nelems":40,)J"
          R"J("dtype":"BFloat16"}})J",
          // Direction from the kernel's own "Collective name".
          R"J({"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(a)","pid":0,"tid":41,)J"
          R"J("ts":20,"dur":5,"args":{"Collective name":"recv"}})J",
          // Direction from the op that launched it, through External id.
          R"J({"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(b)","pid":0,"tid":41,)J"
          R"J("ts":30,"dur":5,"args":{"External id":77}})J",
          R"J({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":9,"tid":9,"ts":29,)J"
          R"J("dur":1,"args":{"External id":77,"Collective name":"send"}})J",
          // No way to tell: a counted warning.
          R"J({"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(c)","pid":0,"tid":41,)J"
          R"J("ts":40,"dur":5})J",
          R"J({"ph":"X","cat":"kernel","name":"ncclDevKernel_Broadcast_RING_LL(d)","pid":0,)J"
          R"J("tid":40,"ts":50,"dur":5})J",
      }),
      "nccl.json", {}, &report);
  const Span* ar = find_span(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)");
  EXPECT_EQ(ar->kind, SpanKind::kCollective);
  EXPECT_EQ(ar->bytes, 4000);
  EXPECT_EQ(find_span(t, "ncclKernel_AllGather_RING_LL_Sum_int8_t()")->bytes, 80);  // the larger
  EXPECT_EQ(find_span(t, "ncclDevKernel_SendRecv(a)")->kind, SpanKind::kRecv);
  EXPECT_EQ(find_span(t, "ncclDevKernel_SendRecv(b)")->kind, SpanKind::kSend);
  EXPECT_EQ(find_span(t, "ncclDevKernel_SendRecv(c)")->kind, SpanKind::kSend);
  EXPECT_EQ(find_span(t, "ncclDevKernel_Broadcast_RING_LL(d)")->kind, SpanKind::kCollective);
  EXPECT_EQ(report.count(ImportWarning::kSendRecvDirection), 1u);
  for (const Lane& lane : t.devices[0].lanes) EXPECT_EQ(lane.kind, LaneKind::kComm) << lane.name;
}

TEST(ChromeImport, LaunchFlowsBindToTheSlicesTheyPointAt) {
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({
          R"J({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":5,"tid":6,"ts":100,"dur":50})J",
          R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":6,)J"
          R"J("ts":110,"dur":5})J",
          R"J({"ph":"s","id":7,"pid":5,"tid":6,"ts":110,"cat":"ac2g","name":"ac2g"})J",
          R"J({"ph":"f","id":7,"pid":0,"tid":7,"ts":130,"cat":"ac2g","name":"ac2g","bp":"e"})J",
          R"J({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":130,"dur":10})J",
          // Without bp "e" a finish binds to the next slice that begins at or after it.
          R"J({"ph":"s","id":8,"pid":5,"tid":6,"ts":120,"cat":"fwdbwd","name":"fwdbwd"})J",
          R"J({"ph":"f","id":8,"pid":0,"tid":7,"ts":141,"cat":"fwdbwd","name":"fwdbwd"})J",
          R"J({"ph":"X","cat":"kernel","name":"relu","pid":0,"tid":7,"ts":145,"dur":1})J",
          // Kineto's leftovers: a finish with no start, a start with no finish.
          R"J({"ph":"f","id":9,"pid":5,"tid":6,"ts":110,"cat":"ac2g","name":"ac2g","bp":"e"})J",
          R"J({"ph":"s","id":10,"pid":5,"tid":6,"ts":101,"cat":"ac2g","name":"ac2g"})J",
      }),
      "flows.json", {}, &report);
  ASSERT_EQ(t.flows.size(), 2u);
  const auto name_of = [&](uint32_t i) { return std::string(t.span_name(t.spans[i])); };
  EXPECT_EQ(name_of(t.flows[0].from), "cudaLaunchKernel");  // innermost slice enclosing ts 110
  EXPECT_EQ(name_of(t.flows[0].to), "gemm");
  EXPECT_EQ(name_of(t.flows[1].from), "aten::linear");
  EXPECT_EQ(name_of(t.flows[1].to), "relu");
  EXPECT_EQ(report.count(ImportWarning::kUnpairedFlow), 2u);
}

TEST(ChromeImport, AFlowBindsToItsEnclosingSlicePastManyChildren) {
  // An outer op with 10 000 short children; the flow starts after the last child ended.
  std::string json =
      R"J([{"ph":"X","cat":"cpu_op","name":"outer","pid":1,"tid":1,"ts":0,"dur":100000})J";
  for (int i = 0; i < 10000; ++i) {
    json += R"J(,{"ph":"X","cat":"cpu_op","name":"child","pid":1,"tid":1,"ts":)J" +
            std::to_string(i * 5 + 1) + R"J(,"dur":2})J";
  }
  json +=
      R"J(,{"ph":"X","cat":"cpu_op","name":"next","pid":1,"tid":2,"ts":100500,"dur":100})J"
      R"J(,{"ph":"s","id":1,"pid":1,"tid":1,"ts":99999,"cat":"fwdbwd","name":"fwdbwd"})J"
      R"J(,{"ph":"f","id":1,"pid":1,"tid":2,"ts":100550,"cat":"fwdbwd","name":"fwdbwd","bp":"e"}])J";
  const Timeline t = load_trace_bytes(json, "nested.json");
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].from]), "outer");
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].to]), "next");
}

TEST(ChromeImport, ProfilerStepsBecomeStepsCoveringTheWorkTheyLaunched) {
  const Timeline t = load_trace_bytes(
      trace_of({
          R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":5,"tid":6,)J"
          R"J("ts":1000,"dur":100})J",
          R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#6","pid":5,"tid":6,)J"
          R"J("ts":800,"dur":150})J",
          R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":6,)J"
          R"J("ts":1090,"dur":5})J",
          R"J({"ph":"s","id":1,"pid":5,"tid":6,"ts":1090,"cat":"ac2g","name":"ac2g"})J",
          R"J({"ph":"X","cat":"kernel","name":"late","pid":0,"tid":7,"ts":1200,"dur":30})J",
          R"J({"ph":"f","id":1,"pid":0,"tid":7,"ts":1200,"cat":"ac2g","name":"ac2g","bp":"e"})J",
      }),
      "steps.json");
  ASSERT_EQ(t.steps.size(), 2u);  // by step number, not file order
  EXPECT_EQ(t.steps[0].begin_ns, 800000);
  EXPECT_EQ(t.steps[0].end_ns, 950000);
  EXPECT_EQ(t.steps[1].begin_ns, 1000000);
  EXPECT_EQ(t.steps[1].end_ns, 1230000);  // out to the end of the kernel launched in it
  EXPECT_EQ(find_span(t, "ProfilerStep#7")->kind, SpanKind::kAnnotation);
}

// Without host events (convert --no-host) no flow is left to say which step launched a kernel;
// the runtime call's correlation id, read as the call is dropped, still does.
TEST(ChromeImport, AStepCoversTheWorkItLaunchedWhenHostEventsAreDropped) {
  ImportOptions options;
  options.keep_host = false;
  const Timeline t = load_trace_bytes(
      trace_of({
          R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":5,"tid":6,)J"
          R"J("ts":1000,"dur":100})J",
          R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":6,)J"
          R"J("ts":1090,"dur":5,"args":{"correlation":41}})J",
          R"J({"ph":"X","cat":"kernel","name":"late","pid":0,"tid":7,"ts":1200,"dur":30,)J"
          R"J("args":{"device":0,"stream":7,"correlation":41}})J",
          R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":6,)J"
          R"J("ts":1110,"dur":5,"args":{"correlation":42}})J",
          R"J({"ph":"X","cat":"kernel","name":"next","pid":0,"tid":7,"ts":1300,"dur":30,)J"
          R"J("args":{"device":0,"stream":7,"correlation":42}})J",
      }),
      "nohost_steps.json", options);
  EXPECT_TRUE(t.flows.empty());
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].begin_ns, 1000000);
  EXPECT_EQ(t.steps[0].end_ns, 1230000);  // "late", not "next", launched after the step
}

// A kernel cannot start before the call that launched it. One whose time stamp says so (here a
// second early, as an edited file or a clock gone astray gives) is named and stretches no step:
// before, the step began at ts 0 and lasted the whole of the file's clock.
TEST(ChromeImport, DeviceWorkThatBeginsBeforeItsLaunchIsNamedAndStretchesNoStep) {
  for (const bool keep_host : {true, false}) {
    ImportOptions options;
    options.keep_host = keep_host;
    ImportReport report;
    const Timeline t = load_trace_bytes(
        trace_of({
            R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":5,"tid":6,)J"
            R"J("ts":2000000,"dur":100})J",
            R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":6,)J"
            R"J("ts":2000010,"dur":5,"args":{"correlation":41}})J",
            R"J({"ph":"X","cat":"kernel","name":"on time","pid":0,"tid":7,"ts":2000050,)J"
            R"J("dur":60,"args":{"device":0,"stream":7,"correlation":41}})J",
            R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":5,"tid":6,)J"
            R"J("ts":2000020,"dur":5,"args":{"correlation":42}})J",
            R"J({"ph":"X","cat":"kernel","name":"too early","pid":0,"tid":7,"ts":1000000,)J"
            R"J("dur":30,"args":{"device":0,"stream":7,"correlation":42}})J",
        }),
        "early.json", options, &report);
    ASSERT_EQ(t.steps.size(), 1u);
    EXPECT_EQ(t.steps[0].begin_ns, 2'000'000'000);
    EXPECT_EQ(t.steps[0].end_ns, 2'000'110'000);  // out to "on time", not back to "too early"
    EXPECT_EQ(report.count(ImportWarning::kDeviceBeforeLaunch), 1u) << keep_host;
    const std::vector<std::string> lines = report.lines();
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("'too early' at 1000000000 ns, launched at 2000020000 ns") != l.npos;
    })) << keep_host;
  }
}

// "ProfilerStep#five" makes no step; the import says so at its byte rather than dropping it.
TEST(ChromeImport, AProfilerStepWithoutANumberIsNamed) {
  ImportReport report;
  const std::string bytes = trace_of({
      R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":5,"tid":6,)J"
      R"J("ts":1000,"dur":100})J",
      R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#five","pid":5,"tid":6,)J"
      R"J("ts":1200,"dur":100})J",
      R"J({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1010,"dur":30})J",
  });
  const Timeline t = load_trace_bytes(bytes, "five.json", {}, &report);
  EXPECT_EQ(t.steps.size(), 1u);
  ASSERT_EQ(report.count(ImportWarning::kUnnumberedStep), 1u);
  EXPECT_EQ(report.first_at[static_cast<size_t>(ImportWarning::kUnnumberedStep)],
            static_cast<int64_t>(
                bytes.find(R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#five")")));
}

TEST(ChromeImport, DistributedInfoAndBaseTimeAreKept) {
  const Timeline t = load_trace_bytes(
      trace_of({R"J({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1})J",
                R"J({"ph":"X","cat":"cpu_op","name":"op","pid":3,"tid":3,"ts":1,"dur":1})J"},
               R"J("distributedInfo":{"backend":"nccl","rank":3,"world_size":8})J"),
      "rank3.json");
  EXPECT_EQ(t.devices[0].name, "rank 3 · GPU 0");
  EXPECT_EQ(t.devices[0].rank, 3);
  EXPECT_EQ(t.devices[1].name, "rank 3 · host");
  EXPECT_EQ(t.metadata.at("rank"), "3");
  EXPECT_EQ(t.metadata.at("world_size"), "8");
  EXPECT_EQ(t.metadata.at("backend"), "nccl");
}

TEST(ChromeImport, GenericTracesUseProcessAndThreadNames) {
  const Timeline t = load_trace_bytes(
      R"J([{"ph":"M","name":"process_name","pid":"worker","args":{"name":"trainer"}},
          {"ph":"M","name":"thread_name","pid":"worker","tid":"io","args":{"name":"io thread"}},
          {"ph":"B","name":"load","pid":"worker","tid":"io","ts":5},
          {"ph":"B","name":"read","pid":"worker","tid":"io","ts":6},
          {"ph":"E","pid":"worker","tid":"io","ts":8},
          {"ph":"E","pid":"worker","tid":"io","ts":9},
          {"ph":"C","name":"mem","pid":"worker","ts":5,"args":{"used":10,"free":2.5}},
          {"ph":"i","name":"mark","pid":"worker","tid":"io","ts":5}])J",
      "generic.json");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "trainer (pid worker)");
  EXPECT_EQ(t.devices[0].lanes[0].name, "io thread");
  EXPECT_EQ(t.metadata.at("source"), "chrome");
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.span_name(t.spans[0]), "load");  // the enclosing span first
  EXPECT_EQ(t.spans[0].end_ns, 9000);
  EXPECT_EQ(t.span_name(t.spans[1]), "read");
  EXPECT_EQ(t.spans[1].end_ns, 8000);
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_EQ(t.counters[0].name, "mem.used");
  EXPECT_EQ(t.counters[1].samples.at(0).value, 2.5);
}

TEST(ChromeImport, HostEventsCanBeDroppedAndAreCounted) {
  ImportOptions options;
  options.keep_host = false;
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({R"J({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1})J",
                R"J({"ph":"X","cat":"cpu_op","name":"op","pid":3,"tid":3,"ts":1,"dur":1})J",
                R"J({"ph":"X","cat":"cuda_runtime","name":"rt","pid":3,"tid":3,"ts":1,"dur":1})J"}),
      "nohost.json", options, &report);
  EXPECT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(report.count(ImportWarning::kHostDropped), 2u);
}

TEST(ChromeImport, SyntheticKinetoTraceComesBackWithWhatItWasMadeOf) {
  SyntheticKinetoOptions o;
  o.iterations = 500;
  std::string json;
  const auto counts = write_synthetic_kineto(o, [&](std::string_view s) { json += s; });
  testing::TempFile file(".json.gz", testing::gzip_bytes(json));
  ImportReport report;
  const Timeline t = load_trace(file.path(), {}, &report);
  EXPECT_EQ(count_kind(t, SpanKind::kCollective), counts.nccl_kernels);
  EXPECT_EQ(count_kind(t, SpanKind::kCompute), counts.kernels - counts.nccl_kernels);
  EXPECT_EQ(count_kind(t, SpanKind::kMemcpy), counts.memcpys);
  EXPECT_EQ(count_kind(t, SpanKind::kHost) + count_kind(t, SpanKind::kAnnotation),
            counts.host_spans);
  EXPECT_EQ(static_cast<int64_t>(t.flows.size()), counts.launch_flows);
  EXPECT_EQ(static_cast<int64_t>(t.steps.size()), counts.steps);
  EXPECT_EQ(report.events_read, static_cast<uint64_t>(counts.events));
  EXPECT_EQ(t.metadata.at("base_time_ns"), std::to_string(o.base_time_ns));
  EXPECT_EQ(detect_trace_format(file.path()), "chrome-json");
}

}  // namespace
}  // namespace meshscope::traces
