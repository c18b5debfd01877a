// `--window hta`: HTA 0.5's rules on hand-built event tables (each rule alone, with the answer
// worked out by hand), and on real Kineto traces against the figures HTA 0.5.0 itself printed.
#include "traces/analysis_hta_window.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "traces/import/hta_events.h"

namespace meshscope::traces {
namespace {

// A table built event by event; names and categories interned on the fly.
class Table {
 public:
  Table() { t_.strings.assign(1, ""); }
  Table& ev(std::string cat, std::string name, double ts, double dur, int64_t stream = -1,
            int64_t corr = -1) {
    HtaEvent e{.index = static_cast<int64_t>(t_.events.size()),
               .ts_us = ts,
               .dur_us = dur,
               .stream = stream,
               .correlation = corr,
               .name = id(name),
               .cat = id(cat)};
    t_.events.push_back(e);
    return *this;
  }
  Table& floats() {
    t_.float_ts = true;
    return *this;
  }
  const HtaEventTable& get() const { return t_; }

 private:
  uint32_t id(const std::string& s) {
    for (uint32_t i = 0; i < t_.strings.size(); ++i) {
      if (t_.strings[i] == s) return i;
    }
    t_.strings.push_back(s);
    return static_cast<uint32_t>(t_.strings.size() - 1);
  }
  HtaEventTable t_;
};

TEST(HtaWindow, KernelTimeIdleAndKindsByName) {
  Table t;
  t.ev("kernel", "gemm", 0, 10, 7, 1)
      .ev("kernel", "ncclDevKernel_AllReduce_Sum_f32", 5, 10, 13, 2)  // 5..15, overlaps gemm 5..10
      .ev("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 20, 5, 7, 3)
      .ev("kernel", "elementwise", 30, 10, 7, 4)
      .ev("cuda_sync", "Stream Sync", 40, 2, 7);  // a stream: counts as GPU time, kind other
  const HtaRankFigures f = hta_rank_figures(t.get(), false);
  EXPECT_DOUBLE_EQ(f.kernel_time_us, 42);
  EXPECT_DOUBLE_EQ(f.idle_us, 42 - (15 + 5 + 12));  // union 0..15, 20..25, 30..42
  EXPECT_DOUBLE_EQ(f.compute_us, 20);
  EXPECT_DOUBLE_EQ(f.communication_us, 10);
  EXPECT_DOUBLE_EQ(f.overlap_us, 5);
  ASSERT_TRUE(f.comm_compute_overlap);
  EXPECT_DOUBLE_EQ(*f.comm_compute_overlap, 0.5);
  EXPECT_DOUBLE_EQ(f.non_compute_us, 42 - 20 - 10);
  EXPECT_EQ(f.kernels, 5);
}

TEST(HtaWindow, NoCommunicationLeavesOverlapUndefined) {
  Table t;
  t.ev("kernel", "gemm", 0, 10, 7, 1);
  EXPECT_FALSE(hta_rank_figures(t.get(), false).comm_compute_overlap);
}

TEST(HtaWindow, FloatTimesRoundStartUpEndDownKeepingNegativeLengths) {
  Table t;
  t.floats()
      .ev("kernel", "a", 0.4, 2.2, 7, 1)   // 1 .. 2   (end 2.6 down)
      .ev("kernel", "b", 5.2, 0.5, 7, 2)   // 6 .. 5   (length -1, kept)
      .ev("kernel", "c", 8.0, 2.0, 7, 3);  // 8 .. 10
  const HtaRankFigures f = hta_rank_figures(t.get(), false);
  EXPECT_TRUE(f.rounded);
  EXPECT_DOUBLE_EQ(f.kernel_time_us, 10 - 1);
  EXPECT_DOUBLE_EQ(f.idle_us, 9 - (1 - 1 + 2));  // HTA's Σ end − Σ start with b's −1
  Table same;  // the same events without rounding (an integer ts column)
  same.ev("kernel", "a", 0.4, 2.2, 7, 1)
      .ev("kernel", "b", 5.2, 0.5, 7, 2)
      .ev("kernel", "c", 8, 2, 7, 3);
  EXPECT_NEAR(hta_rank_figures(same.get(), false).kernel_time_us, 10 - 0.4, 1e-9);
}

TEST(HtaWindow, StepFilterDropsTheLastStepAndUncorrelatedGpuEvents) {
  Table t;
  t.ev("user_annotation", "ProfilerStep#1", 0, 100)
      .ev("user_annotation", "ProfilerStep#2", 100, 100)
      .ev("cuda_runtime", "cudaLaunchKernel", 10, 1, -1, 1)
      .ev("cuda_runtime", "cudaLaunchKernel", 150, 1, -1, 2)  // in the last step
      .ev("kernel", "k1", 20, 10, 7, 1)
      .ev("kernel", "k2", 160, 10, 7, 2)   // launched in the last step: dropped
      .ev("kernel", "k3", 40, 10, 7, 99);  // no CPU event with correlation 99: dropped
  std::vector<HtaEventTable> run{t.get()};
  ASSERT_TRUE(hta_step_filter_applies(run));
  const HtaRankFigures f = hta_rank_figures(t.get(), true);
  EXPECT_TRUE(f.step_filter);
  EXPECT_EQ(f.gpu_events_dropped, 2);
  EXPECT_EQ(f.kernels, 1);
  EXPECT_DOUBLE_EQ(f.kernel_time_us, 10);
  const HtaRankFigures unfiltered = hta_rank_figures(t.get(), false);
  EXPECT_DOUBLE_EQ(unfiltered.kernel_time_us, 170 - 20);
}

TEST(HtaWindow, OneStepNameMeansNoFilter) {
  Table t;
  t.ev("user_annotation", "ProfilerStep#1", 0, 100).ev("kernel", "k", 20, 10, 7, 5);
  EXPECT_FALSE(hta_step_filter_applies({t.get()}));
}

TEST(HtaWindow, IdleSplitPerStreamWithThirtyMicrosecondKernelWait) {
  Table t;
  t.ev("cuda_runtime", "cudaLaunchKernel", 0, 1, -1, 1)
      .ev("cuda_runtime", "cudaLaunchKernel", 1, 1, -1, 2)
      .ev("cuda_runtime", "cudaLaunchKernel", 2, 1, -1, 3)
      .ev("cuda_runtime", "cudaLaunchKernel", 200, 1, -1, 4)
      .ev("kernel", "k1", 10, 10, 7, 1)   // ends 20
      .ev("kernel", "k2", 45, 10, 7, 2)   // gap 25 < 30, launched early: kernel wait
      .ev("kernel", "k3", 100, 10, 7, 3)  // gap 45, launched early: other
      .ev("kernel", "k4", 210, 10, 7, 4)  // gap 100, launched at 200 > 110: host wait
      .ev("kernel", "s1", 10, 10, 9, 1)   // another stream: split on its own
      .ev("kernel", "s2", 25, 10, 9, 2);  // gap 5: kernel wait
  const HtaRankFigures f = hta_rank_figures(t.get(), false);
  ASSERT_EQ(f.streams.size(), 2u);
  EXPECT_EQ(f.streams[0].stream, 7);
  EXPECT_DOUBLE_EQ(f.streams[0].kernel_wait_us, 25);
  EXPECT_DOUBLE_EQ(f.streams[0].other_us, 45);
  EXPECT_DOUBLE_EQ(f.streams[0].host_wait_us, 100);
  EXPECT_DOUBLE_EQ(f.streams[1].kernel_wait_us, 5);
  // The streams' split (175) exceeds the rank's idle time: they are summed separately.
  EXPECT_DOUBLE_EQ(f.idle_us, (220 - 10) - (10 + 10 + 10 + 10 + 10));  // s2 adds 25..35
}

TEST(HtaWindow, KernelsOverlappingOnAStreamKeepHtasNegativeWaitAndSaySo) {
  // k2 starts 4 µs before k1 ends: HTA's gap is -4, under its 30 µs, so a kernel wait of -4.
  Table t;
  t.ev("cuda_runtime", "cudaLaunchKernel", 0, 1, -1, 1)
      .ev("cuda_runtime", "cudaLaunchKernel", 1, 1, -1, 2)
      .ev("kernel", "k1", 10, 10, 7, 1)
      .ev("kernel", "k2", 16, 10, 7, 2);
  HtaRankFigures f = hta_rank_figures(t.get(), false);
  ASSERT_EQ(f.streams.size(), 1u);
  EXPECT_DOUBLE_EQ(f.streams[0].kernel_wait_us, -4);
  f.file = "t.json";
  EXPECT_NE(format_hta_window_table({f}).find(
                "note: kernels overlap on stream 7, so HTA's gaps between them are negative (its "
                "kernel wait there: -4.000 µs)"),
            std::string::npos)
      << format_hta_window_table({f});
}

// Real traces: the figures HolisticTraceAnalysis 0.5.0 printed for them
// (scripts/hta_figures.py; command and output in docs/ACCURACY.md).
struct HtaPrinted {
  const char* file;
  double idle_pct, compute_pct, overlap_pct;  // overlap < 0: HTA printed NaN
  double host_wait_us, kernel_wait_us, other_us;
};

class HtaOnRealTraces : public ::testing::TestWithParam<HtaPrinted> {};

TEST_P(HtaOnRealTraces, MatchesHtaWithinHalfAPoint) {
  const HtaPrinted& p = GetParam();
  const auto file = std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/hta" / p.file;
  const HtaEventTable t = read_hta_events(file);
  const HtaRankFigures f = hta_rank_figures(t, hta_step_filter_applies({t}));
  EXPECT_NEAR(100 * f.idle_fraction, p.idle_pct, 0.5);
  EXPECT_NEAR(100 * f.compute_fraction, p.compute_pct, 0.5);
  if (p.overlap_pct < 0) {
    EXPECT_FALSE(f.comm_compute_overlap);
  } else {
    ASSERT_TRUE(f.comm_compute_overlap);
    EXPECT_NEAR(100 * *f.comm_compute_overlap, p.overlap_pct, 0.5);
  }
  double host = 0, kernel = 0, other = 0;
  for (const HtaStreamIdle& s : f.streams) {
    host += s.host_wait_us;
    kernel += s.kernel_wait_us;
    other += s.other_us;
  }
  EXPECT_NEAR(host, p.host_wait_us, 0.005 * p.host_wait_us + 1);
  EXPECT_NEAR(kernel, p.kernel_wait_us, 0.005 * p.kernel_wait_us + 1);
  EXPECT_NEAR(other, p.other_us, 0.005 * p.other_us + 1);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HtaOnRealTraces,
                         ::testing::Values(HtaPrinted{"a100_nccl_rank0_no_cpu_op.json.gz", 77.78,
                                                      17.26, 14.31, 738746, 2155, 0},
                                           HtaPrinted{"b200_vllm_tp8_rank0_no_python.json.gz",
                                                      87.20, 12.02, 0.0, 73166, 566, 0},
                                           HtaPrinted{"h800_deepseek_v3_rank0.json.gz", 0.39, 99.60,
                                                      -1, 83832, 1941, 23786}));

TEST(HtaWindow, A100TraceHasTwoStepsKeptAndRoundedTimes) {
  const auto file = std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                    "tests/fixtures/hta/a100_nccl_rank0_no_cpu_op.json.gz";
  const HtaEventTable t = read_hta_events(file);
  EXPECT_TRUE(t.float_ts);
  EXPECT_EQ(t.rank, 0);
  EXPECT_TRUE(hta_step_filter_applies({t}));  // ProfilerStep#4, #5, #6
}

}  // namespace
}  // namespace meshscope::traces
