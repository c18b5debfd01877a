#include "sim/predict/calibrate_model.h"

#include <gtest/gtest.h>

#include "sim/cost/compute_model.h"
#include "sim/predict/simulate.h"
#include "sim/predict/workload_costs.h"

namespace meshscope::predict {
namespace {

traces::Timeline trace_of_mlp() {
  traces::Timeline t;
  t.run.source = traces::RunSource::kCpu;
  t.run.mesh = {1, 2, 1};
  t.run.family = t.run.schedule = "1f1b";
  t.run.microbatches = 4;
  t.run.stages = 2;
  t.run.workload.kind = traces::ModelKind::kMlp;
  t.run.workload.layers = 3;
  t.run.workload.hidden = 64;
  t.run.workload.batch = 32;
  // Display strings only: what they say must not matter.
  t.metadata = {{"model", "something else L=99"}, {"mesh", "dp=7 pp=9"}, {"microbatches", "x"}};
  return t;
}

TEST(PredictCalibrate, RebuildsTheConfigurationATraceRan) {
  const auto c = config_of_trace(trace_of_mlp(), "cpu-local");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->model, ModelKind::kMlp);
  EXPECT_EQ(c->mlp_layers, 3);
  EXPECT_EQ(c->mlp_hidden, 64);
  EXPECT_EQ(c->mesh.pp, 2);
  EXPECT_EQ(c->micro_batch, 8);
  EXPECT_EQ(c->schedule, schedule::Family::kOneFOneB);
  traces::Timeline gpt = trace_of_mlp();
  gpt.run.workload.kind = traces::ModelKind::kGpt;
  EXPECT_FALSE(config_of_trace(gpt, "cpu-local"));
  traces::Timeline unknown = trace_of_mlp();
  unknown.run.workload.kind = traces::ModelKind::kUnknown;
  EXPECT_FALSE(config_of_trace(unknown, "cpu-local"));
}

// trace_of_mlp's run with forward spans on one device, `reps` of each of its 2 stages, each
// lasting `overhead_ns` + `scale` x the op model's time (0 ns for every `zero_every`-th rep when it
// is given), with their FLOPs as args.flops or none; the spans given a time in `timed`.
struct ForwardSpans {
  traces::Timeline trace = trace_of_mlp();
  WorkloadCosts costs;
  int timed = 0;
};
ForwardSpans forward_spans(int reps, double scale, int64_t overhead_ns, bool flops,
                           int zero_every = 0) {
  ForwardSpans out;
  traces::Timeline& t = out.trace;
  const cost::ComputeModel model(cost::find_hardware("cpu-local"), cost::Precision::kFp32);
  out.costs = workload_costs(*config_of_trace(t, "cpu-local"));
  const uint16_t d = t.add_device(0, "rank 0");
  t.add_lane(d, "compute", traces::LaneKind::kCompute);
  int64_t now = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (int s = 0; s < 2; ++s) {
      double x = 0;
      for (const model::OpCost& op : out.costs.stages[s].forward) x += model.op_seconds(op);
      traces::Span sp;
      sp.device = d;
      sp.kind = traces::SpanKind::kCompute;
      sp.phase = traces::Phase::kForward;
      sp.stage = static_cast<int16_t>(s);
      sp.flops = flops ? out.costs.stages[s].forward_flops() : 0;
      sp.begin_ns = now;
      const bool zero = zero_every > 0 && rep % zero_every == zero_every - 1;
      sp.end_ns =
          zero ? now : now + overhead_ns + static_cast<int64_t>(std::llround(scale * x * 1e9));
      out.timed += zero ? 0 : 1;
      now = sp.end_ns + 1;
      t.add_span(sp);
    }
  return out;
}

TEST(PredictCalibrate, FitsAScaleOnTheOpModel) {
  // Stages of 2 and 1 blocks (different op times). Spans that take 3x the op model's time plus 20
  // us: the fit must find exactly that.
  const ForwardSpans spans = forward_spans(6, 3.0, 20'000, true);
  const cost::Hardware hw = cost::find_hardware("cpu-local");
  int rebuilt = 0;
  const cost::Calibration cal =
      calibrate_against_model({&spans.trace}, hw, cost::Precision::kFp32, &rebuilt);
  EXPECT_EQ(rebuilt, 1);
  const cost::PhaseFit& f = cal.phase(traces::Phase::kForward);
  EXPECT_NEAR(f.model_scale, 3.0, 1e-3);
  EXPECT_NEAR(f.overhead_ns, 20'000, 20);
  // The calibrated model reproduces a span of either stage.
  const cost::ComputeModel model(hw, cost::Precision::kFp32);
  const cost::ComputeModel calibrated(hw, cost::Precision::kFp32, &cal);
  const auto& forward = spans.costs.stages[1].forward;
  double x1 = 0;
  for (const model::OpCost& op : forward) x1 += model.op_seconds(op);
  EXPECT_NEAR(calibrated.phase_seconds(forward, traces::Phase::kForward), 20e-6 + 3 * x1, 1e-7);
}

// Spans of no time say nothing of a rate (the FLOPs fit skips them; the op-model fit had taken
// them as 0 ns and lowered its scale), and spans without args.flops are fitted by the op model all
// the same, with their count (the phase had gone unwritten without a word).
TEST(PredictCalibrate, SpansOfNoTimeAreLeftOutAndSpansWithoutFlopsStillFit) {
  for (const bool flops : {true, false}) {
    const ForwardSpans spans = forward_spans(8, 2.0, 10'000, flops, 4);
    const cost::Calibration cal = calibrate_against_model(
        {&spans.trace}, cost::find_hardware("cpu-local"), cost::Precision::kFp32);
    const cost::PhaseFit& f = cal.phase(traces::Phase::kForward);
    EXPECT_NEAR(f.model_scale, 2.0, 1e-3) << "flops " << flops;
    EXPECT_NEAR(f.overhead_ns, 10'000, 20) << "flops " << flops;
    EXPECT_EQ(f.samples, spans.timed) << "flops " << flops;
    EXPECT_EQ(f.flops_per_s > 0, flops);
  }
}

TEST(PredictCalibrate, AScaleThatTakesAStageBeyondTheSimulatorsClockIsRefused) {
  // A model_scale of 1e15 gave a step faster than a scale of 1 (llround beyond int64).
  const auto c = config_of_trace(trace_of_mlp(), "cpu-local");
  ASSERT_TRUE(c);
  cost::Calibration cal;
  cal.hardware = "cpu-local";
  cal.precision = "fp32";
  cal.phases[static_cast<size_t>(traces::Phase::kForward)].model_scale = 1;
  SimulateOptions so;
  so.calibration = &cal;
  EXPECT_NO_THROW(simulate(*c, so));
  cal.phases[static_cast<size_t>(traces::Phase::kForward)].model_scale = 1e15;
  try {
    simulate(*c, so);
    FAIL() << "simulated";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is outside what the simulator holds (0 to 146 years)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace meshscope::predict
