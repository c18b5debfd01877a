#include "sim/cost/calibration.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "sim/cost/collective_model.h"
#include "sim/cost/fit.h"
#include "sim/cost/hardware.h"

namespace meshscope::cost {
namespace {

TEST(Calibration, LineFitRecoversSlopeAndIntercept) {
  std::vector<double> x, y;
  for (int i = 1; i <= 20; ++i) {
    x.push_back(1e6 * i);
    y.push_back(5000 + 2.5e-3 * 1e6 * i);
  }
  const LineFit f = fit_line(x, y);
  EXPECT_NEAR(f.intercept, 5000, 1e-6);
  EXPECT_NEAR(f.slope, 2.5e-3, 1e-12);
  EXPECT_NEAR(f.rms_relative_error, 0, 1e-12);
  // One size only: no intercept can be told apart, the ratio of sums is the rate.
  const LineFit g = fit_line({100, 100, 100}, {10, 12, 14});
  EXPECT_EQ(g.intercept, 0);
  EXPECT_NEAR(g.slope, 0.12, 1e-12);
}

TEST(Calibration, ASlopeWithinTheNoiseIsNoSlope) {
  // Two sizes 3% apart, each timed three times with ±4% of noise: the least-squares line
  // (slope 0.033, intercept 6.67) would price a span of ten times the size at 40 instead of 100.
  // Its slope is 0.31 of its standard error (0.109), under the t > 2 it needs: the ratio of sums.
  const LineFit f = fit_line({100, 100, 100, 103, 103, 103}, {10.0, 10.4, 9.6, 10.1, 10.5, 9.7});
  EXPECT_EQ(f.intercept, 0);
  EXPECT_NEAR(f.slope, 60.3 / 609, 1e-12);
  // The same sizes timed without noise keep their line.
  const LineFit g = fit_line({100, 100, 100, 103, 103, 103}, {13, 13, 13, 13.3, 13.3, 13.3});
  EXPECT_NEAR(g.slope, 0.1, 1e-9);
  EXPECT_NEAR(g.intercept, 3, 1e-9);
}

TEST(Calibration, OutliersOfAPreemptedSpanAreDropped) {
  std::vector<double> x, y;
  for (int i = 1; i <= 30; ++i) {
    x.push_back(1e6 * (1 + i % 3));
    y.push_back(1e-3 * x.back());
  }
  y[7] *= 20;  // the thread was descheduled
  const LineFit f = fit_line(x, y);
  EXPECT_NEAR(f.slope, 1e-3, 1e-6);
}

// A Timeline whose forwards run at exactly 2 GFLOP/s + 10 us and transfers at 1 GB/s + 5 us.
traces::Timeline synthetic() {
  traces::Timeline t;
  t.run.mesh = {2, 1, 1};
  // Display strings that say otherwise: the fit reads Timeline::run and ::collectives only.
  t.metadata["mesh"] = "dp=8 pp=1 tp=1";
  const uint16_t d = t.add_device(0, "rank 0");
  t.add_lane(d, "compute", traces::LaneKind::kCompute);
  int64_t now = 0;
  for (int i = 0; i < 40; ++i) {
    traces::Span s;
    s.device = d;
    s.kind = traces::SpanKind::kCompute;
    s.phase = traces::Phase::kForward;
    s.flops = 1e6 * (1 + i % 4);
    s.begin_ns = now;
    s.end_ns = now + 10'000 + static_cast<int64_t>(s.flops / 2.0);
    now = s.end_ns;
    t.add_span(s);
    traces::Span r;
    r.device = d;
    r.kind = traces::SpanKind::kRecv;
    r.bytes = 1000 * (1 + i % 5);
    r.begin_ns = now;
    r.end_ns = now + 5000 + r.bytes;
    now = r.end_ns;
    t.add_span(r);
    traces::Span c;
    c.device = d;
    c.kind = traces::SpanKind::kCollective;
    c.name = t.strings.intern("grad sync s0");
    c.bytes = 4000 * (1 + i % 3);
    c.begin_ns = now;
    c.end_ns = now + 2000 + c.bytes;  // bus bytes = bytes for n = 2: 2(n-1)/n = 1
    now = c.end_ns;
    const uint32_t span = t.add_span(c);
    t.set_collective(span, traces::Collective{.op = traces::CollectiveOp::kAllReduce,
                                              .group = traces::GroupKind::kDp,
                                              .bytes = c.bytes,
                                              .algorithm = traces::CollectiveAlgorithm::kAuto});
    // All-to-alls at 0.5 GB/s on bus bytes + 8 us: bus bytes = bytes / 2 for n = 2.
    traces::Span x = c;
    x.name = t.strings.intern("ALLTOALL(dp) s0 mb1");
    x.bytes = 2000 * (1 + i % 4);
    x.begin_ns = now;
    x.end_ns = now + 8000 + x.bytes;
    now = x.end_ns;
    const uint32_t a2a = t.add_span(x);
    t.set_collective(a2a, traces::Collective{.op = traces::CollectiveOp::kAllToAll,
                                             .group = traces::GroupKind::kDp,
                                             .bytes = x.bytes,
                                             .algorithm = traces::CollectiveAlgorithm::kAuto});
  }
  t.steps.push_back({0, now});
  return t;
}

TEST(Calibration, FitRecoversRatesFromATimeline) {
  const traces::Timeline t = synthetic();
  const Hardware hw = find_hardware("cpu-local");
  const Calibration c = fit_calibration({&t}, hw, Precision::kFp32);
  const PhaseFit& f = c.phase(traces::Phase::kForward);
  EXPECT_NEAR(f.flops_per_s, 2e9, 2e9 * 1e-6);
  EXPECT_NEAR(f.overhead_ns, 10'000, 1);
  EXPECT_NEAR(f.efficiency, 2e9 / hw.peak(Precision::kFp32), 1e-9);
  EXPECT_NEAR(c.p2p.bandwidth_bytes_per_s, 1e9, 1);
  EXPECT_NEAR(c.p2p.alpha_ns, 5000, 1e-3);
  EXPECT_NEAR(c.collective.bandwidth_bytes_per_s, 1e9, 1);
  EXPECT_NEAR(c.collective.alpha_ns, 2000, 1e-3);
  EXPECT_EQ(c.collective.samples, 40);
  // All-to-alls are fitted on their own: their rate and latency, not the all-reduces'.
  EXPECT_EQ(c.all_to_all.samples, 40);
  EXPECT_NEAR(c.all_to_all.bandwidth_bytes_per_s, 0.5e9, 1);
  EXPECT_NEAR(c.all_to_all.alpha_ns, 8000, 1e-3);
  EXPECT_EQ(c.phase(traces::Phase::kBackward).samples, 0);
}

// Compute spans with FLOPs and a phase that took no time are said to be so: "no compute span with
// FLOPs and a phase" had named what they have.
TEST(Calibration, ComputeSpansOfNoTimeAreSaidToBeSo) {
  traces::Timeline t;
  const uint16_t d = t.add_device(0, "rank 0");
  t.add_lane(d, "compute", traces::LaneKind::kCompute);
  for (int i = 0; i < 3; ++i) {
    traces::Span s;
    s.device = d;
    s.kind = traces::SpanKind::kCompute;
    s.phase = traces::Phase::kForward;
    s.flops = 1e6;
    s.begin_ns = s.end_ns = 1000 * i;
    t.add_span(s);
  }
  t.steps.push_back({0, 3000});
  try {
    fit_calibration({&t}, find_hardware("cpu-local"), Precision::kFp32);
    FAIL() << "fitted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the traces' 3 compute spans with FLOPs and a phase took "
                                         "no time"),
              std::string::npos)
        << e.what();
  }
}

// A moe run with ep < dp (profiler/exec/moe_block.h): its all-to-alls are over ep, its experts'
// gradient all-reduces over edp, both groups sized from the run's dp and its workload's ep. dp 4
// ep 2 makes both groups of 2, so the fits equal those over the dp group of 2 above; sized as dp
// (4) the bus factors would be 3/4 and 3/2 instead.
TEST(Calibration, EpAndEdpGroupsTakeTheirSizeFromTheWorkloadsEp) {
  traces::Timeline t = synthetic();
  t.run.mesh = {4, 1, 1};
  t.run.workload.kind = traces::ModelKind::kMoe;
  t.run.workload.ep = 2;
  for (traces::SpanCollective& c : t.collectives) {
    c.collective.group = c.collective.op == traces::CollectiveOp::kAllToAll
                             ? traces::GroupKind::kEp
                             : traces::GroupKind::kEdp;
  }
  const Calibration c = fit_calibration({&t}, find_hardware("cpu-local"), Precision::kFp32);
  EXPECT_EQ(c.collective.samples, 40);
  EXPECT_NEAR(c.collective.bandwidth_bytes_per_s, 1e9, 1);
  EXPECT_NEAR(c.collective.alpha_ns, 2000, 1e-3);
  EXPECT_EQ(c.all_to_all.samples, 40);
  EXPECT_NEAR(c.all_to_all.bandwidth_bytes_per_s, 0.5e9, 1);
  EXPECT_NEAR(c.all_to_all.alpha_ns, 8000, 1e-3);
  // ep = dp: edp groups are single ranks, nothing to fit from them.
  t.run.workload.ep = 4;
  EXPECT_EQ(fit_calibration({&t}, find_hardware("cpu-local"), Precision::kFp32).collective.samples,
            0);
}

// A forward that issues its own collective (a tp all-reduce, an ep all-to-all) spends that time
// waiting for its group and communicating: the compute fit takes both out, so the simulator, which
// prices the collective on its own, does not count it twice. A collective of another action is not
// taken out.
TEST(Calibration, CollectivesNestedInAComputeSpanAreNotComputeTime) {
  traces::Timeline t;
  t.run.mesh = {2, 1, 1};
  const uint16_t d = t.add_device(0, "rank 0");
  t.add_lane(d, "compute", traces::LaneKind::kCompute);
  t.add_lane(d, "comm", traces::LaneKind::kComm);
  int64_t now = 0;
  for (int i = 0; i < 20; ++i) {
    traces::Span f;
    f.device = d;
    f.stage = 0;
    f.microbatch = i;
    f.phase = traces::Phase::kForward;
    f.flops = 1e6 * (1 + i % 4);
    const int64_t compute = 10'000 + static_cast<int64_t>(f.flops / 2.0);  // 2 GFLOP/s + 10 us
    const int64_t exchange = 3'000 * (1 + i % 3);
    const int64_t wait = 7'000 * (i % 2);  // for the group's last rank, inside the forward
    f.begin_ns = now;
    f.end_ns = now + compute + wait + exchange;
    t.add_span(f);
    traces::Span a = f;  // its all-to-all, in the middle of it
    a.lane = 1;
    a.kind = traces::SpanKind::kCollective;
    a.flops = 0;
    a.bytes = 4096;
    a.begin_ns = now + compute / 2 + wait;
    a.end_ns = a.begin_ns + exchange;
    const uint32_t exchanged = t.add_span(a);
    t.set_collective(exchanged, traces::Collective{.op = traces::CollectiveOp::kAllToAll,
                                                   .group = traces::GroupKind::kDp,
                                                   .bytes = a.bytes});
    t.set_wait(exchanged, wait);
    now = f.end_ns;
    traces::Span other = a;  // the next backward's, after it: not this forward's
    other.phase = traces::Phase::kBackward;
    other.begin_ns = now;
    other.end_ns = now + 1'000;
    t.set_collective(t.add_span(other), traces::Collective{.op = traces::CollectiveOp::kAllToAll,
                                                           .group = traces::GroupKind::kDp,
                                                           .bytes = other.bytes});
    now = other.end_ns;
  }
  t.steps.push_back({0, now});
  const ComputeTime computing(t);
  EXPECT_EQ(computing.ns(t.spans[0]), 10'000 + 500'000);
  EXPECT_EQ(computing.ns(t.spans[3]), 10'000 + 1'000'000);  // its 7 us wait is not compute either
  const Calibration c = fit_calibration({&t}, find_hardware("cpu-local"), Precision::kFp32);
  const PhaseFit& f = c.phase(traces::Phase::kForward);
  EXPECT_NEAR(f.flops_per_s, 2e9, 2e9 * 1e-6);
  EXPECT_NEAR(f.overhead_ns, 10'000, 1);
}

TEST(Calibration, CollectivesWithoutATypedOpOrOverAGroupOfOneAreNotFitted) {
  traces::Timeline t = synthetic();
  traces::Timeline tp = t;
  for (traces::SpanCollective& c : tp.collectives) c.collective.group = traces::GroupKind::kTp;
  t.collectives.clear();  // the collective spans stay, without their typed op: no fit
  const Hardware hw = find_hardware("cpu-local");
  EXPECT_EQ(fit_calibration({&t}, hw, Precision::kFp32).collective.samples, 0);
  EXPECT_EQ(fit_calibration({&tp}, hw, Precision::kFp32).collective.samples, 0);  // tp = 1
}

// Two ranks' NCCL all-reduces as a PyTorch profile records them (Collective::ranks, no mesh): each
// moves its bytes in 20 us + bytes at 10 GB/s once both ranks are in, and each kernel ends then;
// the rank that came first waited in its kernel 100 to 300 us more. Rank 1 is last in even ones.
traces::Timeline imported_all_reduces(bool with_rank1, int32_t group_ranks = 2) {
  traces::Timeline t;
  const uint16_t d0 = t.add_device(0, "rank 0 · GPU 0");
  const uint16_t d1 = with_rank1 ? t.add_device(1, "rank 1 · GPU 0") : d0;
  const uint32_t name = t.strings.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  int64_t end = 0;
  for (int i = 0; i < 6; ++i) {
    const int64_t bytes = 1'000'000 * (i + 1);
    const int64_t transfer = 20'000 + bytes / 10;  // bus bytes = bytes for 2 ranks
    const int64_t waited = 100'000 * (i % 3 + 1);
    end += 1'000'000 + transfer + waited;
    for (const uint16_t d : with_rank1 ? std::vector<uint16_t>{d0, d1} : std::vector{d0}) {
      const bool last = (d == d1) == (i % 2 == 0);
      traces::Span s;
      s.device = d;
      s.kind = traces::SpanKind::kCollective;
      s.name = name;
      s.bytes = bytes;
      s.begin_ns = end - transfer - (last ? 0 : waited);
      s.end_ns = end;
      t.set_collective(t.add_span(s), traces::Collective{.op = traces::CollectiveOp::kAllReduce,
                                                         .bytes = bytes,
                                                         .ranks = group_ranks});
    }
  }
  t.sort_spans();
  return t;
}

TEST(Calibration, ImportedCollectivesAreTimedOnTheLastOfTheirGroupToArrive) {
  const Hardware hw = find_hardware("h100-sxm");
  const traces::Timeline both = imported_all_reduces(true);
  const Calibration c = fit_calibration({&both}, hw, Precision::kBf16);
  EXPECT_EQ(c.collective.samples, 6);  // one per all-reduce, not one per rank
  EXPECT_NEAR(c.collective.alpha_ns, 20'000, 1);
  EXPECT_NEAR(c.collective.bandwidth_bytes_per_s, 10e9, 1e3);
  EXPECT_EQ(c.collective.min_ranks, 2);
  EXPECT_EQ(c.collective.max_ranks, 2);
  EXPECT_EQ(c.collective.timed_alone, 0);
  EXPECT_EQ(c.precision, "");  // links alone: no format to check a config against
  // Rank 0's file alone: its kernels hold its waits, and it says so.
  const traces::Timeline alone = imported_all_reduces(false);
  const Calibration a = fit_calibration({&alone}, hw, Precision::kBf16);
  EXPECT_EQ(a.collective.samples, 6);
  EXPECT_EQ(a.collective.timed_alone, 6);
  EXPECT_GT(a.collective.rms_error, 0.01);
  // The file keeps what the fit saw.
  const auto path = std::filesystem::temp_directory_path() / "meshscope_calibration_imported.json";
  save_calibration(a, path.string());
  const Calibration back = load_calibration(path.string());
  EXPECT_EQ(back.collective.min_ranks, 2);
  EXPECT_EQ(back.collective.max_ranks, 2);
  EXPECT_EQ(back.collective.timed_alone, 6);
  std::filesystem::remove(path);
  // Both ranks' files, of a group of 3: the later of the two may have waited for the third.
  const traces::Timeline partial = imported_all_reduces(true, 3);
  const Calibration p = fit_calibration({&partial}, hw, Precision::kBf16);
  EXPECT_EQ(p.collective.samples, 6);
  EXPECT_EQ(p.collective.timed_alone, 6);
  EXPECT_EQ(p.collective.max_ranks, 3);
}

// A profile of expert parallelism's all-to-alls alone is fitted, not refused as holding nothing.
TEST(Calibration, AllToAllsAloneAreSomethingToFit) {
  traces::Timeline t = imported_all_reduces(true);
  for (traces::SpanCollective& c : t.collectives) c.collective.op = traces::CollectiveOp::kAllToAll;
  const Calibration c = fit_calibration({&t}, find_hardware("h100-sxm"), Precision::kBf16);
  EXPECT_EQ(c.all_to_all.samples, 6);
  EXPECT_EQ(c.collective.samples, 0);
  // And a collective the cost model does not price (a broadcast) is not fitted.
  for (traces::SpanCollective& x : t.collectives) x.collective.op = traces::CollectiveOp::kOther;
  EXPECT_THROW(fit_calibration({&t}, find_hardware("h100-sxm"), Precision::kBf16),
               std::invalid_argument);
}

// A torch pipeline's NCCL receives as a profile holds them: each recv kernel spins from its launch,
// 100 to 300 us before its send begins; the transfer takes 5 us + bytes at 1 GB/s from there.
TEST(Calibration, AReceiveIsTimedFromItsSendsBeginWhereTheTraceHoldsTheSend) {
  for (const bool with_sends : {true, false}) {
    traces::Timeline t;
    t.run.source = traces::RunSource::kKineto;
    const uint16_t d0 = t.add_device(0, "rank 0 · GPU 0");
    const uint16_t d1 = t.add_device(1, "rank 1 · GPU 0");
    int64_t at = 0;
    for (int i = 0; i < 6; ++i) {
      const int64_t bytes = 100'000 * (i + 1);
      const int64_t transfer = 5'000 + bytes;
      at += 1'000'000;
      traces::Span recv;
      recv.device = d1;
      recv.kind = traces::SpanKind::kRecv;
      recv.bytes = bytes;
      recv.begin_ns = at - 100'000 * (i % 3 + 1);
      recv.end_ns = at + transfer;
      const uint32_t r = t.add_span(recv);
      if (!with_sends) continue;
      traces::Span send = recv;
      send.device = d0;
      send.kind = traces::SpanKind::kSend;
      send.begin_ns = at;
      t.flows.push_back({t.add_span(send), r});
    }
    const Calibration c = fit_calibration({&t}, find_hardware("h100-sxm"), Precision::kBf16);
    EXPECT_EQ(c.p2p.samples, 6);
    if (with_sends) {
      EXPECT_NEAR(c.p2p.alpha_ns, 5'000, 1);
      EXPECT_NEAR(c.p2p.bandwidth_bytes_per_s, 1e9, 1e3);
      EXPECT_EQ(c.p2p.timed_alone, 0);
    } else {
      EXPECT_EQ(c.p2p.timed_alone, 6);  // one rank's file: their waits are in them, and said
    }
  }
}

TEST(Calibration, TheSimulatorTimesAllToAllsWithTheirOwnFit) {
  const traces::Timeline t = synthetic();
  const Hardware hw = find_hardware("cpu-local");
  const Calibration c = fit_calibration({&t}, hw, Precision::kFp32);
  const GroupSpan two{2, 1, 2};
  // 8000 bytes over 2 ranks: 4000 bus bytes at 0.5 GB/s + 8 us = 16 us.
  EXPECT_NEAR(collective_time(hw, CollectiveKind::kAllToAll, 8000, two, &c).seconds, 16e-6, 1e-12);
  // An all-reduce of the same buffer keeps the collective fit: 8000 bus bytes at 1 GB/s + 2 us.
  EXPECT_NEAR(collective_time(hw, CollectiveKind::kAllReduce, 8000, two, &c).seconds, 10e-6, 1e-12);
  // Without an all-to-all fit (an older calibration file) the collective fit applies to it.
  Calibration old = c;
  old.all_to_all = LinkFit{};
  EXPECT_NEAR(collective_time(hw, CollectiveKind::kAllToAll, 8000, two, &old).seconds, 6e-6, 1e-12);
}

TEST(Calibration, FilesRoundTripAndBadOnesNameTheKey) {
  const auto dir = std::filesystem::temp_directory_path() / "meshscope_calibration_test";
  std::filesystem::create_directories(dir);
  const traces::Timeline t = synthetic();
  Calibration c = fit_calibration({&t}, find_hardware("cpu-local"), Precision::kFp32);
  c.traces = {"a.json"};
  save_calibration(c, (dir / "c.json").string());
  const Calibration back = load_calibration((dir / "c.json").string());
  EXPECT_EQ(back.hardware, "cpu-local");
  EXPECT_EQ(back.precision, "fp32");
  EXPECT_EQ(back.traces, c.traces);
  EXPECT_DOUBLE_EQ(back.phase(traces::Phase::kForward).flops_per_s,
                   c.phase(traces::Phase::kForward).flops_per_s);
  EXPECT_DOUBLE_EQ(back.p2p.alpha_ns, c.p2p.alpha_ns);
  EXPECT_DOUBLE_EQ(back.all_to_all.bandwidth_bytes_per_s, c.all_to_all.bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(back.all_to_all.alpha_ns, c.all_to_all.alpha_ns);
  std::ofstream(dir / "bad.json")
      << R"({"format": "meshscope-calibration", "hardware": "cpu-local", "compute": {"sideways": {}}})";
  try {
    load_calibration((dir / "bad.json").string());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'compute.sideways'"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "other.json") << R"({"name": "x"})";
  EXPECT_THROW(load_calibration((dir / "other.json").string()), std::runtime_error);
  // Wrongly typed or negative values, and a directory, are the file's errors with the key named.
  const auto message = [&](const std::string& name, const std::string& text) -> std::string {
    std::ofstream(dir / name) << text;
    try {
      load_calibration((dir / name).string());
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(loaded)";
  };
  EXPECT_NE(
      message(
          "typed.json",
          R"({"format": "meshscope-calibration", "hardware": "cpu-local", "compute": {"forward": 5}})")
          .find("typed.json: key 'compute.forward': "),
      std::string::npos);
  EXPECT_NE(message("hw.json", R"({"format": "meshscope-calibration", "hardware": 7})")
                .find("hw.json: key 'hardware'"),
            std::string::npos);
  // Without the entry the traces ran on, a CPU's fit would price a GPU's work; a later version's
  // file is not read as this one's; a phase named "none" prices nothing.
  EXPECT_NE(message("nohw.json", R"({"format": "meshscope-calibration", "version": 1})")
                .find("nohw.json: key 'hardware': missing: the catalog entry the traces ran on"),
            std::string::npos);
  EXPECT_NE(message("v99.json", R"({"format": "meshscope-calibration", "version": 99,
                                    "hardware": "cpu-local"})")
                .find("v99.json: key 'version': 99, but this meshscope reads version 1"),
            std::string::npos);
  EXPECT_NE(message("none.json", R"({"format": "meshscope-calibration", "hardware": "cpu-local",
                                    "compute": {"none": {"flops_per_s": 1e9}}})")
                .find("none.json: key 'compute.none': no phase"),
            std::string::npos);
  EXPECT_NE(
      message("fp8.json",
              R"({"format": "meshscope-calibration", "hardware": "cpu-local", "precision": "fp8"})")
          .find("fp8.json: key 'precision': 'fp8' is not"),
      std::string::npos);
  EXPECT_NE(
      message(
          "neg.json",
          R"({"format": "meshscope-calibration", "hardware": "cpu-local", "compute": {"forward": {"overhead_ns": -5}}})")
          .find(
              "neg.json: key 'compute.forward.overhead_ns': must be 0 (not fitted) or in [0, 1e9]"),
      std::string::npos);
  // Figures no device has: a p2p bandwidth of 1e-6 B/s had put transfers past the engine's
  // integer nanoseconds (the prediction came out faster than the fit's), an optimizer rate of
  // 1e-300 an infinite stage blamed on the config. Bounded as a hardware file's, each key named.
  for (const auto& [body, said] :
       {std::pair{R"("p2p": {"bandwidth_bytes_per_s": 1e-6})",
                  "key 'p2p.bandwidth_bytes_per_s': must be 0 (not fitted) or in [1, 1e16]"},
        std::pair{R"("collective": {"alpha_ns": 1e12})",
                  "key 'collective.alpha_ns': must be in [0, 1e9] (1 s)"},
        std::pair{R"("compute": {"optimizer": {"flops_per_s": 1e-300}})",
                  "key 'compute.optimizer.flops_per_s': must be 0 (not fitted) or in [1, 1e18]"},
        std::pair{R"("compute": {"forward": {"model_scale": 1e300}})",
                  "key 'compute.forward.model_scale': must be 0 (not fitted) or in [1e-6, 1e6]"},
        // A wrongly typed value names its own key, not its parent with the JSON library's text.
        std::pair{R"("compute": {"forward": {"flops_per_s": null}})",
                  "key 'compute.forward.flops_per_s': must be a number, not null"},
        std::pair{R"("p2p": {"rms_error": "low"})",
                  "key 'p2p.rms_error': must be a number, not string"},
        std::pair{R"("traces": 3)", "key 'traces': must be a list of strings"},
        std::pair{R"("created": 20261207)", "key 'created': must be a string (a date)"},
        std::pair{R"("compute": [1])", "key 'compute': must be an object of phases"}}) {
    const std::string text = R"({"format": "meshscope-calibration", "hardware": "cpu-local", )" +
                             std::string(body) + "}";
    const std::string got = message("bounds.json", text);
    EXPECT_NE(got.find("bounds.json: " + std::string(said)), std::string::npos)
        << body << ": " << got;
    EXPECT_EQ(got.find("json.exception"), std::string::npos) << got;
  }
  // The bounds themselves, and 0 (not fitted), are read.
  EXPECT_EQ(message("edge.json", R"({"format": "meshscope-calibration", "hardware": "cpu-local",
                                     "p2p": {"bandwidth_bytes_per_s": 1, "alpha_ns": 1e9},
                                     "collective": {"bandwidth_bytes_per_s": 0},
                                     "compute": {"forward": {"flops_per_s": 1e18,
                                                             "model_scale": 1e-6}}})"),
            "(loaded)");
  // A key the format does not have, at any level, and a count that is no whole number.
  EXPECT_NE(
      message("typo.json",
              R"({"format": "meshscope-calibration", "hardware": "cpu-local", "computes": {}})")
          .find("typo.json: key 'computes': unknown key"),
      std::string::npos);
  EXPECT_NE(message("fit.json", R"({"format": "meshscope-calibration", "hardware": "cpu-local",
                                    "compute": {"forward": {"flops_per_sec": 1e12}}})")
                .find("fit.json: key 'compute.forward.flops_per_sec': unknown key"),
            std::string::npos);
  EXPECT_NE(message("groups.json", R"({"format": "meshscope-calibration", "hardware": "cpu-local",
                                       "collective": {"group_ranks": [8, 2]}})")
                .find("groups.json: key 'collective.group_ranks': the smallest group is larger"),
            std::string::npos);
  EXPECT_NE(message("group.json", R"({"format": "meshscope-calibration", "hardware": "cpu-local",
                                      "collective": {"group_ranks": 2}})")
                .find("group.json: key 'collective.group_ranks': must be [smallest, largest]"),
            std::string::npos);
  EXPECT_NE(message("alone.json", R"({"format": "meshscope-calibration", "hardware": "cpu-local",
                                      "p2p": {"timed_alone": 1.5}})")
                .find("alone.json: key 'p2p.timed_alone': must be a whole number"),
            std::string::npos);
  EXPECT_NE(
      message(
          "many.json",
          R"({"format": "meshscope-calibration", "hardware": "cpu-local", "p2p": {"samples": 1e30}})")
          .find("many.json: key 'p2p.samples': must be a whole number >= 0"),
      std::string::npos);
  try {
    load_calibration(dir.string());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace meshscope::cost
