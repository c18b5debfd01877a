// The simulator's expert-parallel costs calibrated from a moe run: `meshscope calibrate`'s fit
// over the traces of two moe runs (all-to-alls of two sizes) gives all-to-all alpha/beta, and the
// simulator's price of each all-to-all of the moe stage costs (sim/model/workload_cost.cpp, priced
// on the ep group as simulate() does) is what the traces measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "exec_test_util.h"
#include "sim/cost/topology.h"
#include "sim/predict/calibrate_model.h"
#include "sim/predict/config.h"
#include "sim/predict/workload_costs.h"
#include "tests/sim/moe_spec.h"

namespace meshscope::exec {
namespace {

constexpr int kSteps = 6;

struct MoeRun {
  int hidden;
  predict::PredictConfig config;  // the same run as the simulator reads it
  RunResult result;
};

MoeRun run_moe(int hidden) {
  // 2 blocks of h = `hidden`, batch 64, top-2, ep 2, learning rate 0.05.
  model::WorkloadSpec spec = model::testing::small_moe_spec(2, 64, 2, 1.0, 2);
  spec.hidden = hidden;
  spec.lr = 0.05f;
  const auto s = testing::make_schedule_for(spec, schedule::Family::kDataParallel, {2, 1, 1}, 2);
  MoeRun r{hidden, {}, testing::run_cpu(s, spec, kSteps)};
  const nlohmann::json j = {{"model",
                             {{"kind", "moe"},
                              {"layers", spec.layers},
                              {"hidden", hidden},
                              {"experts", spec.experts},
                              {"top_k", spec.top_k},
                              {"capacity_factor", spec.capacity_factor}}},
                            {"mesh", {{"dp", 2}, {"ep", 2}}},
                            {"batch", {{"global", spec.batch}, {"micro", spec.batch / 4}}},
                            {"schedule", "dp"},
                            {"cluster", {{"gpu", "cpu-local"}}},
                            {"options", {{"precision", "fp32"}, {"optimizer", "sgd"}}}};
  r.config = predict::parse_config(j, "moe run");
  return r;
}

// The all-to-all spans the calibration learns from: inside a step after the first, of positive
// duration (sim/cost/fit.cpp's selection).
std::vector<const traces::Span*> measured_all_to_alls(const traces::Timeline& t) {
  std::vector<const traces::Span*> out;
  for (const traces::SpanCollective& c : t.collectives) {
    const traces::Span& s = t.spans[c.span];
    if (c.collective.op != traces::CollectiveOp::kAllToAll || s.end_ns <= s.begin_ns) continue;
    for (size_t step = 1; step < t.steps.size(); ++step) {
      if (s.begin_ns >= t.steps[step].begin_ns && s.end_ns <= t.steps[step].end_ns) {
        out.push_back(&s);
        break;
      }
    }
  }
  return out;
}

// The calibration's all-to-all fit is a least-squares line through (bus bytes, duration) of every
// such span of both traces, refitted without the tenth of the spans farthest from the first line
// (sim/cost/fit.cpp, fit_line: preempted spans of a shared host). Whichever way it ends (a line
// with an intercept, or through the origin), the kept spans' residuals sum to zero: the prices of
// the kept spans add up to their measured durations. So, with n spans and m = n - n/10 kept,
//   sum of the m shortest measured  <=  sum of every price  <=  sum of every measured + (n/10) x
//   the largest price,
// whatever the host's noise. That band is the tolerance; on a quiet host it is narrow, on a busy
// one wide, and a price off by the traffic's shape (another op's bus factor, the block instead of
// the buffer, a group of the wrong size) still leaves it when the durations follow the bytes.
TEST(MoeCalibration, TheCalibratedSimulatorPricesTheRunsAllToAllsAsMeasured) {
  std::vector<MoeRun> runs;
  for (const int hidden : {16, 128}) runs.push_back(run_moe(hidden));
  std::vector<const traces::Timeline*> traces;
  for (const MoeRun& r : runs) traces.push_back(&r.result.timeline);
  const cost::Hardware hw = cost::find_hardware("cpu-local");
  const cost::Calibration cal =
      predict::calibrate_against_model(traces, hw, cost::Precision::kFp32);
  ASSERT_GT(cal.all_to_all.bandwidth_bytes_per_s, 0);
  std::vector<double> measured_ns, priced_ns;
  for (const MoeRun& r : runs) {
    const predict::WorkloadCosts w = predict::workload_costs(r.config);
    const cost::Topology topo(r.config.mesh, r.config.cp, hw.devices_per_node);
    const predict::CommPricer pricer(hw, topo, r.config.ep, &cal);
    // What the simulator charges per microbatch: the ep all-to-alls of the stage's F and B.
    std::vector<model::TpCollective> charged;
    for (const model::StageCost& st : w.stages) {
      for (const auto* list : {&st.tp_forward, &st.tp_backward}) {
        for (const model::TpCollective& c : *list) {
          if (c.op == traces::CollectiveOp::kAllToAll) charged.push_back(c);
        }
      }
    }
    ASSERT_EQ(charged.size(), 4u * 2) << "dispatch, combine and their gradients, per block";
    // What the run did: the same all-to-alls per rank and microbatch, each of the same bytes; the
    // simulator's price of it is the calibration's all-to-all line at the traced bytes over the
    // traced group (dp = ep = 2: a bus factor of 1/2).
    const auto measured = measured_all_to_alls(r.result.timeline);
    const size_t ranks = 2, microbatches = 2;
    EXPECT_EQ(measured.size(), ranks * microbatches * charged.size() * (kSteps - 1));
    for (const model::TpCollective& c : charged) {
      EXPECT_EQ(c.axis, model::CommAxis::kEp);
      EXPECT_EQ(c.bytes, measured.front()->bytes);
      const double line = cal.all_to_all.alpha_ns + 0.5 * static_cast<double>(c.bytes) /
                                                        cal.all_to_all.bandwidth_bytes_per_s * 1e9;
      EXPECT_NEAR(pricer.seconds(c) * 1e9, line, 1e-6 * line);
    }
    for (const traces::Span* s : measured) {
      EXPECT_EQ(s->bytes, charged.front().bytes);
      measured_ns.push_back(static_cast<double>(s->duration_ns()));
      priced_ns.push_back(pricer.seconds(charged.front()) * 1e9);
    }
  }
  const size_t n = measured_ns.size(), dropped = n / 10;
  ASSERT_EQ(static_cast<size_t>(cal.all_to_all.samples), n) << "the fit saw other spans";
  std::vector<double> sorted = measured_ns;
  std::sort(sorted.begin(), sorted.end());
  double shortest_kept = 0, all_measured = 0, all_priced = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i < n - dropped) shortest_kept += sorted[i];
    all_measured += sorted[i];
    all_priced += priced_ns[i];
  }
  const double largest_price = *std::max_element(priced_ns.begin(), priced_ns.end());
  std::printf(
      "all-to-alls: %zu spans, measured %.1f us in all (%.1f us without the longest tenth), "
      "priced %.1f us (alpha %.2f us, %.3f GB/s)\n",
      n, all_measured / 1e3, shortest_kept / 1e3, all_priced / 1e3, cal.all_to_all.alpha_ns / 1e3,
      cal.all_to_all.bandwidth_bytes_per_s / 1e9);
  EXPECT_GE(all_priced, shortest_kept * (1 - 1e-9));
  EXPECT_LE(all_priced, (all_measured + dropped * largest_price) * (1 + 1e-9));
}

}  // namespace
}  // namespace meshscope::exec
