// CUPTI records -> Timeline: labelling by external correlation and by NVTX, lanes, span kinds of
// communication, flows from send to recv, clock alignment, out-of-order buffers, drops.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "profiler/capture/cupti/decoder.h"
#include "profiler/capture/cupti/external_id.h"
#include "profiler/capture/cupti/timeline_builder.h"
#include "tests/profiler/cupti_fake.h"
#include "tests/profiler/cupti_label_counts.h"

namespace meshscope::capture::cupti {
namespace {

using schedule::ActionKind;
using testing::SyntheticBuffer;
using traces::LaneKind;
using traces::Phase;
using traces::SpanKind;

constexpr int64_t kOffset = 1'795'000'000'000'000'000;  // CUPTI clock = host + kOffset
constexpr uint32_t kThread0 = 1000, kThread1 = 2000;
constexpr uint32_t kCompute0 = 10, kComm0 = 11, kCompute1 = 20, kComm1 = 21;

uint64_t c(int64_t host_ns) { return static_cast<uint64_t>(host_ns + kOffset); }

ActionInfo info(ActionKind kind, int stage, int mb, int index, std::string label, SpanKind sk,
                Phase phase, int peer = -1, int64_t tag = -1, int64_t bytes = 0) {
  ActionInfo a;
  a.action.kind = kind;
  a.action.stage = stage;
  a.action.microbatch = mb;
  a.action.peer = peer;
  a.index = index;
  a.label = std::move(label);
  a.span_kind = sk;
  a.phase = phase;
  a.peer = peer;
  a.tag = tag;
  a.bytes = bytes;
  a.flops = sk == SpanKind::kCompute ? 2e6 : 0;
  return a;
}

uint64_t id(int step, int rank, int index, int inner = -1) {
  return encode({step, rank, index, inner});
}

// Two pipeline stages on one GPU (as cuda-virtual runs them): rank 0 computes F s0 mb0 and sends
// it; rank 1 receives it and computes F s1 mb0.
class CuptiTimelineTest : public ::testing::Test {
 protected:
  CuptiTimelineTest() {
    programs_ = {
        {info(ActionKind::kForward, 0, 0, 0, "F s0 mb0", SpanKind::kCompute, Phase::kForward),
         info(ActionKind::kSendForward, 0, 0, 1, "SEND_F s0 mb0", SpanKind::kSend, Phase::kForward,
              1, 7, 4096)},
        {info(ActionKind::kRecvForward, 1, 0, 0, "RECV_F s1 mb0", SpanKind::kRecv, Phase::kForward,
              0, 7, 4096),
         info(ActionKind::kForward, 1, 0, 1, "F s1 mb0", SpanKind::kCompute, Phase::kForward)}};
    clock_.add({kOffset, 0});
  }

  BuildInput input(const RecordSet& records) {
    BuildInput in;
    in.records = &records;
    in.clock = &clock_;
    in.programs = &programs_;
    in.ranks = {{"rank 0 · dp0 pp0 tp0",
                 {0, 0, 0},
                 kThread0,
                 {{0, 1, kCompute0, "compute", LaneKind::kCompute},
                  {0, 1, kComm0, "comm", LaneKind::kComm}}},
                {"rank 1 · dp0 pp1 tp0",
                 {0, 1, 0},
                 kThread1,
                 {{0, 1, kCompute1, "compute", LaneKind::kCompute},
                  {0, 1, kComm1, "comm", LaneKind::kComm}}}};
    in.host = host_;
    return in;
  }

  static RecordSet decode_all(const std::vector<SyntheticBuffer>& buffers) {
    testing::FakeCupti api;
    RecordSet out;
    for (const auto& b : buffers) {
      CompletedBuffer done = b.complete();
      decode_buffer(api, done.buffer.data(), done.valid_bytes, out);
    }
    return out;
  }

  traces::Timeline build(const std::vector<SyntheticBuffer>& buffers) {
    records_ = decode_all(buffers);
    return build_timeline(input(records_), &report_);
  }

  // The first non-idle span named `name`.
  static const traces::Span* find(const traces::Timeline& t, std::string_view name,
                                  SpanKind not_kind = SpanKind::kAnnotation) {
    for (const auto& s : t.spans) {
      if (t.span_name(s) == name && s.kind != SpanKind::kIdle && s.kind != not_kind) return &s;
    }
    return nullptr;
  }
  static std::string_view lane_name(const traces::Timeline& t, const traces::Span& s) {
    return t.devices[s.device].lanes[s.lane].name;
  }

  // Opens an NVTX range `name` of `domain` (marker `marker`, payload the id of F s1 mb0) on rank
  // 1's thread at `begin`, and launches a kernel in it over [launch_begin, launch_end) with
  // correlation `correlation`. The caller closes the range.
  static SyntheticBuffer& open_range_and_launch(SyntheticBuffer& b, uint32_t marker,
                                                const char* name, const char* domain, int64_t begin,
                                                int64_t launch_begin, int64_t launch_end,
                                                uint32_t correlation) {
    return b.add(testing::marker_start(marker, c(begin), kThread1, name, domain))
        .add(testing::marker_payload(marker, id(0, 1, 1)))
        .add(testing::runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                     c(launch_begin), c(launch_end), kThread1, correlation));
  }

  std::vector<std::vector<ActionInfo>> programs_;
  std::vector<std::vector<HostAction>> host_ = {{}, {}};
  ClockSync clock_;
  RecordSet records_;
  BuildReport report_;
};

TEST_F(CuptiTimelineTest, KernelIsLabelledByItsExternalCorrelationId) {
  SyntheticBuffer b;
  b.add(testing::runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, c(100), c(110),
                                kThread0, 1))
      .add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::kernel_record("sgemm_fwd", c(1000), c(3000), 0, kCompute0, 1));
  const auto t = build({b});
  const traces::Span* s = find(t, "sgemm_fwd");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->device, 0);
  EXPECT_EQ(lane_name(t, *s), "compute");
  EXPECT_EQ(s->kind, SpanKind::kCompute);
  EXPECT_EQ(s->stage, 0);
  EXPECT_EQ(s->microbatch, 0);
  EXPECT_EQ(s->phase, Phase::kForward);
  EXPECT_EQ(s->begin_ns, 1000);  // aligned to the host clock
  EXPECT_EQ(s->end_ns, 3000);
  EXPECT_EQ(report_.by_external_id, 1u);
  // The action's annotation spans its GPU work on the same lane, carrying its FLOPs.
  const traces::Span* a = find(t, "F s0 mb0", SpanKind::kCount);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind, SpanKind::kAnnotation);
  EXPECT_EQ(a->begin_ns, 1000);
  EXPECT_EQ(a->end_ns, 3000);
  EXPECT_DOUBLE_EQ(a->flops, 2e6);
}

TEST_F(CuptiTimelineTest, KernelWithoutExternalIdIsLabelledByTheEnclosingNvtxRange) {
  SyntheticBuffer b;
  open_range_and_launch(b, 9, "F s1 mb0", "meshscope", 4000, 5000, 5100, 2)
      .add(testing::marker_end(9, c(9000), kThread1))
      .add(testing::kernel_record("gelu_fwd", c(6000), c(7000), 0, kCompute1, 2));
  const auto t = build({b});
  const traces::Span* s = find(t, "gelu_fwd");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->device, 1);
  EXPECT_EQ(s->stage, 1);
  EXPECT_EQ(s->phase, Phase::kForward);
  EXPECT_EQ(report_.by_nvtx, 1u);
  EXPECT_EQ(report_.by_external_id, 0u);
}

TEST_F(CuptiTimelineTest, ExternalIdWinsOverADisagreeingNvtxRange) {
  SyntheticBuffer b;
  open_range_and_launch(b, 9, "F s1 mb0", "meshscope", 4000, 5000, 5100, 2)
      .add(testing::external_record(id(0, 1, 0), 2))  // RECV_F s1 mb0
      .add(testing::marker_end(9, c(9000), kThread1))
      .add(testing::kernel_record("copy_kernel", c(6000), c(7000), 0, kComm1, 2));
  const auto t = build({b});
  const traces::Span* s = find(t, "copy_kernel");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->kind, SpanKind::kRecv);
  EXPECT_EQ(report_.by_external_id, 1u);
}

TEST_F(CuptiTimelineTest, RangesOfOtherDomainsAnnotateButNeverLabel) {
  SyntheticBuffer b;
  open_range_and_launch(b, 4, "user region", "other", 4000, 5000, 5100, 2)
      .add(testing::marker_end(4, c(9000), kThread1))
      .add(testing::kernel_record("k", c(6000), c(7000), 0, kCompute1, 2));
  const auto t = build({b});
  const traces::Span* s = find(t, "k");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->stage, -1);
  EXPECT_EQ(s->device, 1);  // its stream still places it
  EXPECT_EQ(report_.unlabelled, 1u);
  const traces::Span* region = find(t, "user region", SpanKind::kCount);
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(region->kind, SpanKind::kAnnotation);
  EXPECT_EQ(lane_name(t, *region), "host");
  EXPECT_EQ(region->begin_ns, 4000);
}

TEST_F(CuptiTimelineTest, CommunicationKernelsAndCopiesTakeTheKindOfTheirAction) {
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 1), 1))  // SEND_F on rank 0
      .add(testing::kernel_record("ncclDevKernel_SendRecv", c(100), c(900), 0, kComm0, 1))
      .add(testing::external_record(id(0, 1, 0), 2))  // RECV_F on rank 1
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 4096, c(200), c(800), 0, kComm1,
                                  2))
      .add(testing::kernel_record("_Z31ncclDevKernel_AllReduce_Sum_f32Pv", c(1000), c(2000), 0,
                                  kComm0, 3))  // no action, mangled as CUPTI reports it
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 64, c(3000), c(3100), 0,
                                  kCompute0, 4))
      .add(testing::memset_record(64, c(3200), c(3300), 0, kCompute0, 5));
  const auto t = build({b});
  const traces::Span* send = find(t, "ncclDevKernel_SendRecv");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->kind, SpanKind::kSend);
  EXPECT_EQ(send->bytes, 4096);
  EXPECT_EQ(lane_name(t, *send), "comm");
  const traces::Span* recv = find(t, "memcpy DtoD");
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->kind, SpanKind::kRecv);
  EXPECT_EQ(recv->device, 1);
  EXPECT_EQ(recv->bytes, 4096);
  ASSERT_NE(find(t, "ncclDevKernel_AllReduce_Sum_f32(void*)"), nullptr);
  EXPECT_EQ(find(t, "ncclDevKernel_AllReduce_Sum_f32(void*)")->kind, SpanKind::kCollective);
  EXPECT_EQ(find(t, "memcpy HtoD")->kind, SpanKind::kMemcpy);
  EXPECT_EQ(find(t, "memset")->kind, SpanKind::kMemset);
}

TEST_F(CuptiTimelineTest, FlowGoesFromTheSendsLastGpuSpanToTheRecvsFirst) {
  host_ = {{{0, 0, -1, 50, 60, -1}, {0, 1, -1, 70, 80, -1}},
           {{0, 0, -1, 40, 90, -1}, {0, 1, -1, 95, 99, -1}}};
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 1), 1))
      .add(testing::kernel_record("pack", c(100), c(200), 0, kComm0, 1))
      .add(testing::external_record(id(0, 0, 1), 2))
      .add(testing::kernel_record("send_copy", c(200), c(400), 0, kComm0, 2))
      .add(testing::external_record(id(0, 1, 0), 3))
      .add(testing::kernel_record("recv_copy", c(450), c(600), 0, kComm1, 3))
      .add(testing::external_record(id(0, 1, 0), 4))
      .add(testing::kernel_record("unpack", c(600), c(650), 0, kComm1, 4));
  const auto t = build({b});
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].from]), "send_copy");
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].to]), "recv_copy");
  EXPECT_EQ(report_.flows, 1u);
}

TEST_F(CuptiTimelineTest, ASendThatIssuedNoGpuWorkFlowsFromItsHostAnnotation) {
  host_ = {{{0, 0, -1, 50, 60, -1}, {0, 1, -1, 70, 80, -1}},
           {{0, 0, -1, 40, 90, -1}, {0, 1, -1, 95, 99, -1}}};
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 1, 0), 3))
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 4096, c(450), c(600), 0, kComm1,
                                  3));
  const auto t = build({b});
  ASSERT_EQ(t.flows.size(), 1u);
  const traces::Span& from = t.spans[t.flows[0].from];
  EXPECT_EQ(t.span_name(from), "SEND_F s0 mb0");
  EXPECT_EQ(lane_name(t, from), "host");
  EXPECT_EQ(from.begin_ns, 70);
  EXPECT_EQ(t.span_name(t.spans[t.flows[0].to]), "memcpy DtoD");
}

TEST_F(CuptiTimelineTest, DriftingClockIsAlignedThroughTwoPairs) {
  // CUPTI gains 100 ppm: host 1 s reads as 1.0001 s past the first pair.
  clock_ = ClockSync();
  clock_.add({kOffset, 0});
  clock_.add({kOffset + 1'000'100'000, 1'000'000'000});
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::kernel_record("late", kOffset + 500'050'000, kOffset + 500'060'001, 0,
                                  kCompute0, 1));
  const auto t = build({b});
  const traces::Span* s = find(t, "late");
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(static_cast<double>(s->begin_ns), 500'000'000.0, 1.0);
  EXPECT_NEAR(static_cast<double>(s->end_ns), 500'010'000.0, 1.0);
}

// Spans and flows in a canonical, order-independent form.
std::vector<std::tuple<int, std::string, int64_t, int64_t, int, int, int>> canon(
    const traces::Timeline& t) {
  std::vector<std::tuple<int, std::string, int64_t, int64_t, int, int, int>> out;
  for (const auto& s : t.spans) {
    out.emplace_back(
        s.device,
        std::string(t.devices[s.device].lanes[s.lane].name) + "/" + std::string(t.span_name(s)),
        s.begin_ns, s.end_ns, static_cast<int>(s.kind), s.stage, s.microbatch);
  }
  for (const auto& f : t.flows) {
    out.emplace_back(
        -1,
        std::string(t.span_name(t.spans[f.from])) + "->" + std::string(t.span_name(t.spans[f.to])),
        t.spans[f.from].begin_ns, t.spans[f.to].begin_ns, 0, 0, 0);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(CuptiTimelineTest, BuffersCompletedOutOfOrderGiveTheSameTimeline) {
  host_ = {{{0, 0, -1, 50, 60, 1024}, {0, 1, -1, 70, 80, -1}},
           {{0, 0, -1, 40, 90, -1}, {0, 1, -1, 95, 99, 2048}}};
  // The kernels arrive in one buffer, their correlation links and API calls in later ones.
  SyntheticBuffer kernels, links, calls;
  kernels.add(testing::kernel_record("fwd0", c(100), c(300), 0, kCompute0, 1))
      .add(testing::kernel_record("send", c(300), c(350), 0, kComm0, 2))
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 4096, c(360), c(400), 0, kComm1,
                                  3))
      .add(testing::kernel_record("fwd1", c(400), c(700), 0, kCompute1, 4));
  links.add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::external_record(id(0, 0, 1), 2))
      .add(testing::external_record(id(0, 1, 0), 3))
      .add(testing::external_record(id(0, 1, 1), 4));
  calls.add(testing::runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, c(55), c(58),
                                    kThread0, 1));
  const auto in_order = canon(build({calls, links, kernels}));
  const auto reversed = canon(build({kernels, links, calls}));
  const auto shuffled = canon(build({links, kernels, calls}));
  EXPECT_EQ(in_order, reversed);
  EXPECT_EQ(in_order, shuffled);
  EXPECT_EQ(report_.by_external_id, 4u);
}

TEST_F(CuptiTimelineTest, DroppedRecordsAreReportedInTheTimeline) {
  SyntheticBuffer b;
  b.add(testing::kernel_record("k", c(1), c(2), 0, kCompute0, 1));
  records_ = decode_all({b});
  records_.dropped_records = 7;
  const auto t = build_timeline(input(records_), &report_);
  EXPECT_EQ(report_.dropped_records, 7u);
  EXPECT_EQ(t.metadata.at("cupti_dropped_records"), "7");
}

TEST_F(CuptiTimelineTest, RecordsOfNoRankGetAnUnattributedDevice) {
  SyntheticBuffer b;
  b.add(testing::kernel_record("stray", c(1), c(2), 3, 99, 1));
  const auto t = build({b});
  const traces::Span* s = find(t, "stray");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(t.devices[s->device].name, "GPU 3 (unattributed)");
  EXPECT_EQ(report_.unattributed, 1u);
}

TEST_F(CuptiTimelineTest, LabelledWorkOnAnUnregisteredStreamGetsAStreamLaneOfItsRank) {
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::kernel_record("side", c(1), c(2), 0, 55, 1));
  const auto t = build({b});
  const traces::Span* s = find(t, "side");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->device, 0);
  EXPECT_EQ(lane_name(t, *s), "stream 55");
}

TEST_F(CuptiTimelineTest, StepWindowIsTheGpuExtentAndMemoryIsSampledWhenTheGpuFinished) {
  host_ = {{{0, 0, -1, 10, 20, 1024}, {0, 1, -1, 20, 30, -1}},
           {{0, 0, -1, 15, 25, -1}, {0, 1, -1, 25, 35, 2048}}};
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::kernel_record("fwd0", c(100), c(300), 0, kCompute0, 1))
      .add(testing::external_record(id(0, 1, 1), 2))
      .add(testing::kernel_record("fwd1", c(500), c(800), 0, kCompute1, 2));
  const auto t = build({b});
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].begin_ns, 100);
  EXPECT_EQ(t.steps[0].end_ns, 800);
  ASSERT_EQ(t.counters.size(), 2u);
  EXPECT_EQ(t.counters[0].name, traces::kActivationBytesCounter);
  ASSERT_EQ(t.counters[0].samples.size(), 1u);
  EXPECT_EQ(t.counters[0].samples[0].t_ns, 300);
  EXPECT_DOUBLE_EQ(t.counters[0].samples[0].value, 1024);
  // Rank 1 waits for rank 0's forward: that wait is a bubble inside the step window.
  bool rank1_idle = false;
  for (const auto& s : t.spans) rank1_idle |= s.kind == SpanKind::kIdle && s.device == 1;
  EXPECT_TRUE(rank1_idle);
}

TEST_F(CuptiTimelineTest, EqualStreamIdsOfTwoContextsBelongToTheirOwnRanks) {
  // Each green context is a context of its own, and CUPTI numbers streams per context: rank 1's
  // stream has rank 0's stream id in another context.
  SyntheticBuffer b;
  b.add(testing::kernel_record("in_ctx1", c(100), c(200), 0, kCompute0, 1, /*context=*/1))
      .add(testing::kernel_record("in_ctx2", c(100), c(200), 0, kCompute0, 2, /*context=*/2));
  records_ = decode_all({b});
  BuildInput in = input(records_);
  in.ranks[1].streams = {{0, 2, kCompute0, "compute", LaneKind::kCompute}};
  const auto t = build_timeline(in, &report_);
  const traces::Span* a = find(t, "in_ctx1");
  const traces::Span* z = find(t, "in_ctx2");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(a->device, 0);
  EXPECT_EQ(z->device, 1);
  EXPECT_EQ(lane_name(t, *a), "compute");
  EXPECT_EQ(lane_name(t, *z), "compute");
  EXPECT_EQ(report_.unlabelled, 2u);
  EXPECT_EQ(report_.unattributed, 0u);
}

TEST_F(CuptiTimelineTest, TheMetadataCountsHowOpsWereLabelled) {
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::kernel_record("by_id", c(100), c(200), 0, kCompute0, 1));
  open_range_and_launch(b, 9, "F s1 mb0", "meshscope", 300, 310, 320, 2)
      .add(testing::marker_end(9, c(900), kThread1))
      .add(testing::kernel_record("by_nvtx", c(400), c(500), 0, kCompute1, 2))
      .add(testing::kernel_record("by_none", c(600), c(700), 0, kCompute1, 3))
      .add(testing::kernel_record("stray", c(600), c(700), 5, 77, 4));
  const auto t = build({b});
  testing::expect_label_counts(t,
                               {.gpu_ops = 4, .by_external_id = 1, .by_nvtx = 1, .unlabelled = 1});
  EXPECT_EQ(t.metadata.at("cupti_unattributed_ops"), "1");
  EXPECT_EQ(t.metadata.at("cupti_nvtx_ranges"), "1");
}

TEST_F(CuptiTimelineTest, RecordsCuptiCouldNotTimeAreDroppedAndLeaveTheStepWindowAlone) {
  SyntheticBuffer b;
  b.add(testing::external_record(id(0, 0, 0), 1))
      .add(testing::kernel_record("fwd0", c(100), c(300), 0, kCompute0, 1))
      .add(testing::external_record(id(0, 1, 1), 2))
      .add(testing::kernel_record("untimed", 0, 0, 0, kCompute1, 2))  // no timestamps
      .add(testing::external_record(id(0, 1, 1), 3))
      .add(testing::kernel_record("reversed", c(900), c(400), 0, kCompute1, 3));
  const auto t = build({b});
  EXPECT_EQ(find(t, "untimed"), nullptr);
  EXPECT_EQ(find(t, "reversed"), nullptr);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].begin_ns, 100);  // not the CUPTI epoch mapped to the host clock
  EXPECT_EQ(t.steps[0].end_ns, 300);
  EXPECT_EQ(report_.untimed_records, 2u);
  EXPECT_EQ(t.metadata.at("cupti_untimed_records"), "2");
}

}  // namespace
}  // namespace meshscope::capture::cupti
