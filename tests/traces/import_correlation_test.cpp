// Kineto traces without flow events: launches link to kernels through args.correlation, so the
// host-wait share of idle time is seen (before, all of it was "other").
#include <gtest/gtest.h>

#include <string>

#include "traces/analysis.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

// Two kernels on stream 7; the second is launched 50 µs after the first ended (host wait), the
// third before the second ended but starts 40 µs after it (other).
std::string trace(bool with_flows) {
  std::string ev =
      R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":5,"args":{"correlation":11}},
{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":10,"dur":10,"args":{"device":0,"stream":7,"correlation":11}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":70,"dur":5,"args":{"correlation":12}},
{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":80,"dur":10,"args":{"device":0,"stream":7,"correlation":12}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":76,"dur":2,"args":{"correlation":13}},
{"ph":"X","cat":"kernel","name":"k3","pid":0,"tid":7,"ts":130,"dur":10,"args":{"device":0,"stream":7,"correlation":13}})";
  if (with_flows) {
    ev += R"(,
{"ph":"s","cat":"ac2g","id":11,"pid":1,"tid":1,"ts":0},{"ph":"f","cat":"ac2g","id":11,"pid":0,"tid":7,"ts":10,"bp":"e"},
{"ph":"s","cat":"ac2g","id":12,"pid":1,"tid":1,"ts":70},{"ph":"f","cat":"ac2g","id":12,"pid":0,"tid":7,"ts":80,"bp":"e"},
{"ph":"s","cat":"ac2g","id":13,"pid":1,"tid":1,"ts":76},{"ph":"f","cat":"ac2g","id":13,"pid":0,"tid":7,"ts":130,"bp":"e"})";
  }
  return R"({"traceEvents":[)" + ev + "]}";
}

TEST(KinetoCorrelation, LaunchesLinkByCorrelationWithoutFlowEvents) {
  const Timeline t = load_trace_bytes(trace(false), "no_flows.json");
  ASSERT_EQ(t.flows.size(), 3u);
  for (const Flow& f : t.flows) {
    EXPECT_EQ(t.spans[f.from].kind, SpanKind::kHost);
    EXPECT_EQ(t.span_name(t.spans[f.to]).substr(0, 1), "k");
  }
  const HtaDeviceBreakdown h = analyze(t).hta.at(0);
  EXPECT_EQ(h.host_wait_ns, 60'000);   // 20 -> 80: launched at 70 > 20
  EXPECT_EQ(h.other_idle_ns, 40'000);  // 90 -> 130: launched at 76, before 90; 40 µs > 30 µs
}

TEST(KinetoCorrelation, FlowEventsStayTheSourceAndAreNotDoubled) {
  const Timeline with = load_trace_bytes(trace(true), "flows.json");
  EXPECT_EQ(with.flows.size(), 3u);  // the flow events' links, no correlation duplicates
  const Timeline without = load_trace_bytes(trace(false), "no_flows.json");
  EXPECT_EQ(analyze(with).hta.at(0).host_wait_ns, analyze(without).hta.at(0).host_wait_ns);
}

}  // namespace
}  // namespace meshscope::traces
