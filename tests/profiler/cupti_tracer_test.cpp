// The CUPTI tracer as the executor drives it: ids and NVTX ranges per action on the rank threads,
// records from a fake CUPTI (split over many buffers, completed out of order) -> the Timeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "profiler/capture/cupti/cupti_tracer.h"
#include "profiler/capture/cupti/external_id.h"
#include "profiler/capture/cupti_entry.h"
#include "profiler/runtime/clock.h"
#include "tests/profiler/cupti_fake.h"
#include "tests/profiler/cupti_label_counts.h"

namespace meshscope::capture::cupti {
namespace {

using schedule::ActionKind;
using traces::Phase;
using traces::SpanKind;

// Records the tracer's NVTX calls; with `forward` set it also makes them NVTX events of the fake
// CUPTI, as libcupti records them once injected into NVTX.
class RecordingMarker final : public RangeMarker {
 public:
  explicit RecordingMarker(testing::FakeCupti& fake) : fake_(fake) {}
  struct Push {
    std::string label;
    uint64_t payload;
  };
  void open() override { fake_.calls.push_back("marker open"); }
  void push(const std::string& label, uint64_t payload) override {
    {
      std::lock_guard lock(mutex);
      pushes.push_back({label, payload});
    }
    if (forward) fake_.nvtx_push(label, payload, "meshscope");
  }
  void pop() override {
    {
      std::lock_guard lock(mutex);
      ++pops;
    }
    if (forward) fake_.nvtx_pop();
  }
  testing::FakeCupti& fake_;
  bool forward = false;
  std::mutex mutex;
  std::vector<Push> pushes;
  int pops = 0;
};

ActionInfo info(ActionKind kind, int stage, int index, std::string label, SpanKind sk, Phase phase,
                int peer = -1, int64_t tag = -1) {
  ActionInfo a;
  a.action.kind = kind;
  a.action.stage = stage;
  a.action.microbatch = 0;
  a.index = index;
  a.label = std::move(label);
  a.span_kind = sk;
  a.phase = phase;
  a.peer = peer;
  a.tag = tag;
  a.bytes = peer >= 0 ? 4096 : 0;
  return a;
}

CUstream fake_stream(uintptr_t v) { return reinterpret_cast<CUstream>(v); }

class CuptiTracerTest : public ::testing::Test {
 protected:
  CuptiTracerTest() : mesh_(mesh::MeshShape{1, 2, 1}) {
    programs_ = {
        {info(ActionKind::kForward, 0, 0, "F s0 mb0", SpanKind::kCompute, Phase::kForward),
         info(ActionKind::kSendForward, 0, 1, "SEND_F s0 mb0", SpanKind::kSend, Phase::kForward, 1,
              3)},
        {info(ActionKind::kRecvForward, 1, 0, "RECV_F s1 mb0", SpanKind::kRecv, Phase::kForward, 0,
              3),
         info(ActionKind::kForward, 1, 1, "F s1 mb0", SpanKind::kCompute, Phase::kForward)}};
    inner_ = {
        {}, {InnerInfo{"tp all-reduce s1 fc2", mesh::GroupKind::kTp, SpanKind::kCollective, 512}}};
    auto fake = std::make_unique<testing::FakeCupti>(/*offset_ns=*/1'795'000'000'000'000'000,
                                                     /*drift_ppm=*/20);
    fake_ = fake.get();
    auto marker = std::make_unique<RecordingMarker>(*fake_);
    marker_ = marker.get();
    std::vector<TracedStream> streams;
    for (int r = 0; r < 2; ++r) {
      fake_->map_stream(fake_stream(0x100 + 2 * r), 10 + 2 * r);
      fake_->map_stream(fake_stream(0x101 + 2 * r), 11 + 2 * r);
      streams.push_back({r, 0, fake_stream(0x100 + 2 * r), "compute", traces::LaneKind::kCompute});
      streams.push_back({r, 0, fake_stream(0x101 + 2 * r), "comm", traces::LaneKind::kComm});
    }
    tracer_ = std::make_unique<CuptiTracer>(std::move(fake), std::move(marker), std::move(streams));
    run_.mesh = &mesh_;
    run_.steps = 2;
    run_.backend = "cuda-virtual (fake)";
    run_.metadata = {{"source", "cuda-virtual"}};
    run_.programs = &programs_;
    run_.inner = &inner_;
  }

  // Rank r's thread as the executor runs it: each action "launches" one GPU op of 1 µs that
  // starts when the previous one on the rank ended (rank 1 starts after rank 0's send).
  void run_rank(int r, int64_t t0) {
    for (int step = 0; step < run_.steps; ++step) {
      tracer_->step_begin(r, step);
      int64_t gpu = t0 + step * 100'000 + r * 3'000;
      for (const ActionInfo& a : programs_[r]) {
        tracer_->action_begin(r, step, a);
        const bool comm = traces::is_communication(a.span_kind);
        const uint32_t stream = 10 + 2 * r + (comm ? 1 : 0);
        if (comm) {
          fake_->launch_copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 4096, 0, stream, gpu, gpu + 1000);
        } else {
          fake_->launch_kernel("mlp_fwd", 0, stream, gpu, gpu + 1000);
        }
        if (r == 1 && a.index == 1) {
          tracer_->inner_begin(r, step, inner_[1][0]);
          fake_->launch_kernel("sum_peers", 0, 13, gpu + 1000, gpu + 1500);
          tracer_->inner_end(r, step, inner_[1][0], 0);
        }
        gpu += 1500;
        tracer_->action_end(r, step, a, ActionEnd{0, a.index == 0 ? 1000 * (r + 1) : -1});
      }
      tracer_->step_end(r, step);
    }
  }

  traces::Timeline run_both() {
    tracer_->begin_run(run_);
    const int64_t t0 = runtime::host_now_ns() + 1'000'000;
    std::thread r0([&] { run_rank(0, t0); });
    std::thread r1([&] { run_rank(1, t0); });
    r0.join();
    r1.join();
    return tracer_->finish();
  }

  const traces::Span* find(const traces::Timeline& t, int device, std::string_view name, int stage,
                           SpanKind kind) {
    for (const auto& s : t.spans) {
      if (s.device == device && t.span_name(s) == name && s.stage == stage && s.kind == kind) {
        return &s;
      }
    }
    return nullptr;
  }

  mesh::Mesh mesh_;
  std::vector<std::vector<ActionInfo>> programs_;
  std::vector<std::vector<InnerInfo>> inner_;
  testing::FakeCupti* fake_;
  RecordingMarker* marker_;
  std::unique_ptr<CuptiTracer> tracer_;
  RunInfo run_;
};

TEST_F(CuptiTracerTest, EachActionPushesItsIdAndANamedRangeAndPopsBoth) {
  run_both();
  EXPECT_EQ(fake_->open_ids(), 0);
  // 2 steps x (2 + 2 actions) + 2 inner collectives.
  ASSERT_EQ(marker_->pushes.size(), 10u);
  EXPECT_EQ(marker_->pops, 10);
  EXPECT_EQ(fake_->pushed_ids.size(), 10u);
  for (const auto& p : marker_->pushes) {
    const auto key = decode_external_id(p.payload);
    ASSERT_TRUE(key.has_value());
    const std::string& expected = key->inner >= 0 ? inner_[key->rank][key->inner].label
                                                  : programs_[key->rank][key->index].label;
    EXPECT_EQ(p.label, expected);
  }
  // The ids pushed to CUPTI are the payloads of the ranges.
  std::vector<uint64_t> payloads;
  for (const auto& p : marker_->pushes) payloads.push_back(p.payload);
  std::sort(payloads.begin(), payloads.end());
  auto ids = fake_->pushed_ids;
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(payloads, ids);
}

TEST_F(CuptiTracerTest, RecordsOverManyOutOfOrderBuffersBecomeALabelledTimeline) {
  fake_->set_records_per_buffer(2);
  fake_->set_reverse_delivery(true);
  const traces::Timeline t = run_both();
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[1].name, "rank 1 · dp0 pp1 tp0");
  EXPECT_EQ(tracer_->report().by_external_id, 10u);
  EXPECT_EQ(tracer_->report().unattributed, 0u);
  const traces::Span* f0 = find(t, 0, "mlp_fwd", 0, SpanKind::kCompute);
  ASSERT_NE(f0, nullptr);
  EXPECT_EQ(f0->phase, Phase::kForward);
  EXPECT_EQ(t.devices[0].lanes[f0->lane].name, "compute");
  const traces::Span* recv = find(t, 1, "memcpy DtoD", 1, SpanKind::kRecv);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(t.devices[1].lanes[recv->lane].name, "comm");
  const traces::Span* inner = find(t, 1, "sum_peers", 1, SpanKind::kCollective);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->bytes, 512);
  EXPECT_EQ(t.flows.size(), 2u);  // one send -> recv per step
  for (const auto& f : t.flows) {
    EXPECT_EQ(t.spans[f.from].kind, SpanKind::kSend);
    EXPECT_EQ(t.spans[f.to].kind, SpanKind::kRecv);
    EXPECT_LE(t.spans[f.from].begin_ns, t.spans[f.to].begin_ns);
  }
  EXPECT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.metadata.at("tracer"), "cupti");
  EXPECT_EQ(t.metadata.at("source"), "cuda-virtual");
  EXPECT_EQ(t.metadata.at("cupti_dropped_records"), "0");
  // The counts a reader checks that the capture recorded and labelled something.
  testing::expect_label_counts(
      t, {.gpu_ops = 10, .by_external_id = 10, .by_nvtx = 0, .unlabelled = 0});
  EXPECT_EQ(t.metadata.at("cupti_untimed_records"), "0");
}

TEST_F(CuptiTracerTest, TheMarkersFirstNvtxCallComesAfterCuptiRecordsTheNvtxKinds) {
  run_both();
  const auto at = [&](const std::string& call) {
    return std::find(fake_->calls.begin(), fake_->calls.end(), call) - fake_->calls.begin();
  };
  ASSERT_LT(at("marker open"), static_cast<long>(fake_->calls.size()));
  EXPECT_LT(at("start"), at("marker open"));
  // Both NVTX kinds, enabled before any other.
  ASSERT_GE(fake_->enabled.size(), 2u);
  EXPECT_EQ(fake_->enabled[0], CUPTI_ACTIVITY_KIND_MARKER);
  EXPECT_EQ(fake_->enabled[1], CUPTI_ACTIVITY_KIND_MARKER_DATA);
}

TEST_F(CuptiTracerTest, WithoutExternalIdsTheNvtxRangesStillLabelEveryOp) {
  // Needs MARKER_DATA among the captured kinds: the range's payload is the action's id.
  fake_->set_ignore_external_ids(true);
  marker_->forward = true;
  const traces::Timeline t = run_both();
  EXPECT_EQ(tracer_->report().by_external_id, 0u);
  EXPECT_EQ(tracer_->report().by_nvtx, 10u);
  EXPECT_EQ(t.metadata.at("cupti_ops_by_nvtx"), "10");
  EXPECT_NE(find(t, 1, "sum_peers", 1, SpanKind::kCollective), nullptr);  // innermost range
  EXPECT_NE(find(t, 1, "memcpy DtoD", 1, SpanKind::kRecv), nullptr);
}

TEST_F(CuptiTracerTest, GpuTimesLandOnTheHostClockDespiteOffsetAndDrift) {
  const traces::Timeline t = run_both();
  // Every GPU op was placed at host times in [t0, t0 + 2 steps]: an unaligned 1.8e18 offset or
  // the 20 ppm drift left uncorrected would throw them far outside.
  const int64_t now = runtime::host_now_ns();
  for (const auto& s : t.spans) {
    if (!traces::is_device_activity(s.kind)) continue;
    EXPECT_GT(s.begin_ns, now - 60'000'000'000LL);
    EXPECT_LT(s.end_ns, now + 60'000'000'000LL);
  }
  const traces::Span* a = find(t, 0, "mlp_fwd", 0, SpanKind::kCompute);
  const traces::Span* b = find(t, 1, "mlp_fwd", 1, SpanKind::kCompute);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // Relative placement survives exactly (to within rounding): rank 1's first forward starts
  // 3 µs + 1.5 µs after rank 0's.
  EXPECT_NEAR(static_cast<double>(b->begin_ns - a->begin_ns), 4500.0, 2.0);
}

TEST_F(CuptiTracerTest, DroppedRecordsAreCountedAndReported) {
  fake_->drop_next(3);
  const traces::Timeline t = run_both();
  EXPECT_EQ(t.metadata.at("cupti_dropped_records"), "3");
  EXPECT_EQ(tracer_->report().dropped_records, 3u);
}

TEST_F(CuptiTracerTest, RecordsDroppedAfterTheLastBufferAreCountedToo) {
  fake_->drop_next(3);               // reported with a buffer
  fake_->drop_after_last_buffer(4);  // read from the queues once the capture stopped
  const traces::Timeline t = run_both();
  EXPECT_EQ(t.metadata.at("cupti_dropped_records"), "7");
  EXPECT_EQ(tracer_->report().dropped_records, 7u);
}

TEST_F(CuptiTracerTest, ABufferEndingInAnIncompleteRecordKeepsTheRunAndIsCounted) {
  // As a forced flush after a stopped run hands it over: one record, then one CUPTI cannot read.
  CUpti_ActivityKernel10 incomplete{};
  incomplete.kind = CUPTI_ACTIVITY_KIND_INVALID;
  const auto now = static_cast<uint64_t>(fake_->to_cupti(runtime::host_now_ns()));
  fake_->queue(testing::SyntheticBuffer()
                   .add(testing::kernel_record("tail", now, now + 1000, 0, 10, 999))
                   .add(incomplete)
                   .complete());
  const traces::Timeline t = run_both();
  EXPECT_EQ(t.metadata.at("cupti_incomplete_buffers"), "1");
  EXPECT_EQ(tracer_->report().incomplete_buffers, 1u);
  EXPECT_EQ(tracer_->report().by_external_id, 10u);  // every other buffer as before
}

TEST_F(CuptiTracerTest, AStreamWhoseIdsCannotBeReadLosesItsLaneNameNotTheRun) {
  fake_->fail_stream(fake_stream(0x103));  // rank 1's comm stream
  const traces::Timeline t = run_both();
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(tracer_->report().by_external_id, 10u);
  EXPECT_EQ(tracer_->report().unattributed, 0u);
  // Its ops keep their actions, on a lane named by the stream id the records carry.
  const traces::Span* recv = find(t, 1, "memcpy DtoD", 1, SpanKind::kRecv);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(t.devices[1].lanes[recv->lane].name, "stream 13");
  const traces::Span* compute = find(t, 1, "mlp_fwd", 1, SpanKind::kCompute);
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(t.devices[1].lanes[compute->lane].name, "compute");
}

TEST(NvtxInjection, PointsNvtxAtTheLoadedLibcuptiUnlessAToolIsChosen) {
  unsetenv("NVTX_INJECTION64_PATH");
  const std::string path = prepare_nvtx_injection();
  EXPECT_NE(path.find("libcupti"), std::string::npos) << path;
  EXPECT_EQ(path, std::getenv("NVTX_INJECTION64_PATH"));
  setenv("NVTX_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so", 1);
  EXPECT_EQ(prepare_nvtx_injection(), "/opt/nsight/libToolsInjection64.so");
  unsetenv("NVTX_INJECTION64_PATH");
}

}  // namespace
}  // namespace meshscope::capture::cupti
