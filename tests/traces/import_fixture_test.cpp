// Rank 0 of a real 2-rank A100 PyTorch trace with NCCL (HolisticTraceAnalysis test data), read
// against facts derived independently with Python's json module (counts by "cat" and "ph",
// ProfilerStep ranges, NCCL args); the numbers below are those facts, not this importer's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/traces/timeline_equal.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

const std::filesystem::path kFixture = std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" /
                                       "fixtures" / "kineto_2rank_a100_nccl_rank0.json.gz";

class KinetoFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    report_ = new ImportReport;
    timeline_ = new Timeline(load_trace(kFixture, {}, report_));
  }
  static void TearDownTestSuite() {
    delete timeline_;
    delete report_;
    timeline_ = nullptr;
    report_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(timeline_, nullptr) << kFixture; }
  static int64_t count(SpanKind k) {
    return std::count_if(timeline_->spans.begin(), timeline_->spans.end(),
                         [&](const Span& s) { return s.kind == k; });
  }
  static Timeline* timeline_;
  static ImportReport* report_;
};
Timeline* KinetoFixture::timeline_ = nullptr;
ImportReport* KinetoFixture::report_ = nullptr;

TEST_F(KinetoFixture, OneGpuWithItsComputeAndNcclStreamsAndOneHostProcess) {
  const Timeline& t = *timeline_;
  // Derived: X events of GPU categories all have pid 0 (tids 7 and 40); CPU ones pid 2910249.
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "rank 0 · GPU 0");
  ASSERT_EQ(t.devices[0].lanes.size(), 2u);
  EXPECT_EQ(t.devices[0].lanes[0].name, "stream 7");
  EXPECT_EQ(t.devices[0].lanes[0].kind, LaneKind::kCompute);
  EXPECT_EQ(t.devices[0].lanes[1].name, "stream 40");
  EXPECT_EQ(t.devices[0].lanes[1].kind, LaneKind::kComm);
  EXPECT_EQ(t.devices[1].name, "rank 0 · host");
  EXPECT_EQ(t.devices[1].lanes.size(), 3u);  // tids 2910249, 2919752 and -549452224
}

TEST_F(KinetoFixture, KernelsCopiesAndNcclCollectives) {
  // Derived: 2700 "kernel" events, 21 of them ncclKernel_* (15 AllReduce, 6 Broadcast, all on
  // stream 40); 960 gpu_memcpy; 114 gpu_memset.
  EXPECT_EQ(count(SpanKind::kCompute), 2700 - 21);
  EXPECT_EQ(count(SpanKind::kCollective), 21);
  EXPECT_EQ(count(SpanKind::kMemcpy), 960);
  EXPECT_EQ(count(SpanKind::kMemset), 114);
  // Derived: Σ max(In, Out msg nelems) × dtype size over the NCCL kernels (18 Float, 3 Long).
  int64_t nccl_bytes = 0;
  for (const Span& s : timeline_->spans) {
    if (s.kind == SpanKind::kCollective) nccl_bytes += s.bytes;
  }
  EXPECT_EQ(nccl_bytes, 307323096);
}

TEST_F(KinetoFixture, NcclKernelsCarryTheirGroupsSizeAndMembers) {
  // Derived: the 15 AllReduce kernels say "Collective name": "allreduce", "Group size": 2,
  // "dtype": "Float", "Process Group Ranks": "[0, 1]"; Σ max(In, Out msg nelems) × 4 = 306684384.
  // The 6 broadcasts are no collective the cost model prices: kOther, kept for their group.
  const Timeline& t = *timeline_;
  int all_reduces = 0, others = 0;
  int64_t bytes = 0;
  for (const SpanCollective& c : t.collectives) {
    EXPECT_EQ(t.spans[c.span].kind, SpanKind::kCollective);
    const std::string_view name = t.span_name(t.spans[c.span]);
    EXPECT_EQ(c.collective.ranks, 2);
    EXPECT_EQ(c.collective.group, GroupKind::kWorld);  // its kind is not known
    EXPECT_EQ(c.collective.first_rank, 0);
    EXPECT_EQ(c.collective.rank_stride, 1);
    EXPECT_EQ(c.collective.bytes, t.spans[c.span].bytes);
    if (c.collective.op == CollectiveOp::kOther) {
      EXPECT_NE(name.find("Broadcast"), std::string_view::npos) << name;
      ++others;
      continue;
    }
    EXPECT_NE(name.find("AllReduce"), std::string_view::npos) << name;
    EXPECT_EQ(c.collective.op, CollectiveOp::kAllReduce);
    ++all_reduces;
    bytes += c.collective.bytes;
  }
  EXPECT_EQ(all_reduces, 15);
  EXPECT_EQ(others, 6);
  EXPECT_EQ(bytes, 306684384);
}

TEST(KinetoCollectives, AnAllGatherOfVllmsTensorParallelGroupOfEight) {
  // Derived: the B200 vLLM trace's one NCCL kernel, ncclDevKernel_AllGather_RING_LL, says
  // "_allgather_base", Group size 8, 25136 in and 201088 out BFloat16 elements: the all-gather's
  // output is its buffer, 402176 bytes.
  const Timeline t = load_trace(std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" / "fixtures" /
                                "hta" / "b200_vllm_tp8_rank0_no_python.json.gz");
  ASSERT_EQ(t.collectives.size(), 1u);
  const Collective& c = t.collectives[0].collective;
  EXPECT_EQ(c.op, CollectiveOp::kAllGather);
  EXPECT_EQ(c.ranks, 8);
  EXPECT_EQ(c.bytes, 402176);
  EXPECT_EQ(c.has_member(7), true);  // "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"
  EXPECT_EQ(c.has_member(8), false);
  // Exported and read back, the group's size stays (collective_ranks).
  const Timeline back = load_trace_bytes(export_chrome_json(t), "reexported.json");
  ASSERT_EQ(back.collectives.size(), 1u);
  EXPECT_EQ(back.collectives[0].collective, c);
}

TEST_F(KinetoFixture, HostWorkAndAnnotations) {
  // Derived: 14346 cpu_op + 8740 cuda_runtime; 42 user_annotation + 30 gpu_user_annotation; the
  // one "Trace" category event (the profiler's window) is not work.
  EXPECT_EQ(count(SpanKind::kHost), 14346 + 8740);
  EXPECT_EQ(count(SpanKind::kAnnotation), 42 + 30);
  EXPECT_EQ(timeline_->spans.size(), 26933u - 1u);
}

TEST_F(KinetoFixture, ThreeProfilerSteps) {
  // Derived: ProfilerStep#4..#6 with ts/dur in µs; the GPU work launched in each ends inside it.
  const Timeline& t = *timeline_;
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[0].begin_ns, 4458676416788066);
  EXPECT_EQ(t.steps[0].end_ns, 4458676639230257);
  EXPECT_EQ(t.steps[2].begin_ns, 4458676859077781);
  EXPECT_EQ(t.steps[2].end_ns, 4458677084014024);
}

TEST_F(KinetoFixture, FlowsAndTheDefectsKinetoLeaves) {
  // Derived: 3774 ac2g ids with both an s and an f, 543 fwdbwd pairs; 4878 ac2g ids with only
  // an f and 88 with only an s; two "i" instant events.
  EXPECT_EQ(timeline_->flows.size(), 3774u + 543u);
  EXPECT_EQ(report_->count(ImportWarning::kUnpairedFlow), 4878u + 88u);
  EXPECT_EQ(report_->count(ImportWarning::kUnsupportedPhase), 2u);
  EXPECT_EQ(report_->count(ImportWarning::kFlowWithoutSpan), 0u);
  for (const Flow& f : timeline_->flows) {
    const Span& from = timeline_->spans[f.from];
    const Span& to = timeline_->spans[f.to];
    EXPECT_EQ(from.kind, SpanKind::kHost);
    EXPECT_LE(from.begin_ns, to.begin_ns);  // a launch precedes what it launches
  }
}

TEST_F(KinetoFixture, RunFacts) {
  const auto& m = timeline_->metadata;
  EXPECT_EQ(m.at("rank"), "0");
  EXPECT_EQ(m.at("world_size"), "2");
  EXPECT_EQ(m.at("backend"), "nccl");
  EXPECT_EQ(m.at("base_time_ns"), "1711964646000000000");
  EXPECT_EQ(m.at("gpu"), "NVIDIA A100-PG509-200");
  EXPECT_EQ(report_->events_read, 40573u);
}

TEST_F(KinetoFixture, ReExportedItReadsBackTheSameUnderKinetosOwnCategories) {
  // Derived: the file's X events by cat: 14346 cpu_op, 8740 cuda_runtime, 2700 kernel, 960
  // gpu_memcpy, 114 gpu_memset, 42 user_annotation, 30 gpu_user_annotation (and one "Trace",
  // the profiler's own window, which is not work). The export must name them the same, carry
  // Kineto's rank, and read back as the same Timeline.
  const std::string json = export_chrome_json(*timeline_);
  const nlohmann::json doc = nlohmann::json::parse(json);
  std::map<std::string, int> by_cat;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X") ++by_cat[e.at("cat").get<std::string>()];
  }
  const std::map<std::string, int> derived = {
      {"cpu_op", 14346},   {"cuda_runtime", 8740},  {"kernel", 2700},           {"gpu_memcpy", 960},
      {"gpu_memset", 114}, {"user_annotation", 42}, {"gpu_user_annotation", 30}};
  EXPECT_EQ(by_cat, derived);
  EXPECT_EQ(doc.at("distributedInfo").at("rank"), 0);
  EXPECT_EQ(doc.at("distributedInfo").at("world_size"), 2);
  testing::expect_same_timeline(*timeline_, load_trace_bytes(json, "reexported.json"));
}

}  // namespace
}  // namespace meshscope::traces
