#include "gui/app/predictor.h"

#include <gtest/gtest.h>
#include <map>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "profiler/exec/executor.h"
#include "sim/model/workload_cost.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/generators.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"

namespace meshscope::gui {
namespace {

TEST(Predictor, SimulatesTheMeasuredConfigurationWithTheSimulator) {
  const auto p = make_predictor();
  ASSERT_TRUE(p);
  EXPECT_NE(std::find(p->schedules.begin(), p->schedules.end(), "zb-h1"), p->schedules.end());
  EXPECT_EQ(p->default_hardware, "cpu-local");
  traces::Timeline measured;
  measured.run.mesh = {1, 4, 1};
  measured.run.family = "1f1b";
  measured.run.microbatches = 8;
  measured.run.workload = {
      .kind = traces::ModelKind::kMlp, .layers = 8, .hidden = 256, .batch = 32};
  measured.metadata = {{"model", "not a model"}, {"mesh", "dp=3"}};  // display only
  const WhatIfConfig c = config_from_run(measured, WhatIfConfig{});
  const traces::Timeline t = p->simulate(c);
  EXPECT_EQ(t.devices.size(), 4u);
  EXPECT_EQ(t.run.family, "1f1b");
  EXPECT_EQ(t.run.microbatches, 8);
  EXPECT_EQ(t.run.hardware, "cpu-local");
  EXPECT_EQ(t.run.workload, measured.run.workload);
  // More microbatches: the pipeline's fill and drain weigh less.
  WhatIfConfig more = c;
  more.microbatches = 32;
  EXPECT_LT(traces::analyze(p->simulate(more)).bubble_fraction, traces::analyze(t).bubble_fraction);
}

TEST(Predictor, UnknownScheduleIsAnErrorThatSaysWhat) {
  const auto p = make_predictor();
  if (!p) GTEST_SKIP() << "this build has no simulator (sim/predict)";
  WhatIfConfig c;
  c.schedule = "zigzag";
  try {
    p->simulate(c);
    FAIL() << "accepted schedule zigzag";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("zigzag"), std::string::npos);
  }
  // A run that does not say which model it trained is predicted with the executor's default.
  EXPECT_NO_THROW(p->simulate(WhatIfConfig{}));
}

// A real meshscope cpu run, written to a trace file and read back as the viewer opens it: the
// what-if panel's predictor calibrates from it, and the replay of the schedule that ran comes
// close to the measured step.
traces::Timeline measured_cpu_run(const std::filesystem::path& file) {
  model::WorkloadSpec spec;
  spec.kind = model::WorkloadKind::kMlp;
  spec.layers = 4;
  spec.hidden = 512;  // actions of milliseconds: the threads' hand-overs are a small part
  spec.batch = 64;
  schedule::GeneratorConfig g;
  g.family = schedule::Family::kOneFOneB;
  g.mesh = {.dp = 1, .pp = 2, .tp = 1};
  g.microbatches = 4;
  for (const auto& c : model::workload_stage_costs(spec, 1, 1, 2, 4)) {
    g.activation_bytes.push_back(c.output_bytes);
    g.gradient_bytes.push_back(c.parameters * 4);
  }
  exec::RunConfig rc;
  rc.workload = spec;
  rc.schedule = schedule::generate(g);
  rc.backend = runtime::BackendKind::kCpu;
  rc.steps = 4;
  traces::write_chrome_trace(exec::run(rc).timeline, file);
  return traces::load_trace(file);
}

TEST(Predictor, StartsCalibratedFromAMeasuredCpuRun) {
  const auto file = std::filesystem::temp_directory_path() / "meshscope_whatif_cpu_run.json";
  const traces::Timeline t = measured_cpu_run(file);
  std::filesystem::remove(file);
  ASSERT_EQ(t.run.source, traces::RunSource::kCpu);
  const WhatIfConfig c = config_from_run(t, WhatIfConfig{});
  EXPECT_EQ(c.schedule, "1f1b");
  EXPECT_EQ(c.pp, 2);
  EXPECT_EQ(c.microbatches, 4);
  EXPECT_EQ(describe(c.workload), "mlp L=4 h=512 batch=64");
  const int64_t measured = traces::analyze(t).step_time_ns;
  ASSERT_GT(measured, 0);

  const auto uncalibrated = make_predictor();
  ASSERT_TRUE(uncalibrated);
  const ReplayTable before = replay_table(*uncalibrated, c, measured);
  auto p = make_predictor();
  const std::string from = p->calibrate(t);
  EXPECT_NE(from.find("calibrated on cpu-local"), std::string::npos) << from;
  const ReplayTable after = replay_table(*p, c, measured);
  ASSERT_TRUE(after.as_run.error.empty()) << after.as_run.error;
  EXPECT_EQ(after.as_run.schedule, "1f1b");
  // How close the replay comes is asserted on a recorded run (the next test): this one's step
  // depends on what else the machine runs. On the shared 2-vCPU VM the calibrated replay came 1-7%
  // short of idle runs, and 16% and 24% short in two fresh-clone CI runs of 2026-12-03 (the
  // threads' hand-overs, which the replay does not model, stretch under load).
  EXPECT_TRUE(std::isfinite(after.as_run.error_percent));
  RecordProperty("measured_step_ns", std::to_string(measured));
  RecordProperty("catalog_error_percent", std::to_string(before.as_run.error_percent));
  RecordProperty("calibrated_error_percent", std::to_string(after.as_run.error_percent));
  // The alternatives: the other pipeline families on the same mesh, none of the non-pipelines.
  EXPECT_GE(after.alternatives.size(), 3u);
  for (const ReplayRow& r : after.alternatives) {
    EXPECT_NE(r.schedule, "1f1b");
    EXPECT_NE(r.schedule, "tp");
  }
}

TEST(Predictor, ItsCalibratedReplayOfARecordedCpuRunComesCloseToTheMeasuredStep) {
  // tests/fixtures/meshscope_cpu (README there: the command, the machine, the date): the run of
  // the test above, recorded on an idle machine. Calibrated from its compute spans, the replay
  // misses only what lies outside them (the threads' hand-overs). Predicted at bf16 rates, as the
  // predictor did before it read the run's format, such runs came out 50-52% short; the catalog's
  // cpu-local rates (one machine's) missed them by +53% to -9%, so they are not compared.
  const traces::Timeline t = traces::load_trace(
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json");
  ASSERT_EQ(t.run.source, traces::RunSource::kCpu);
  const WhatIfConfig c = config_from_run(t, WhatIfConfig{});
  EXPECT_EQ(describe(c.workload), "mlp L=4 h=512 batch=64");
  const int64_t measured = traces::analyze(t).step_time_ns;
  ASSERT_GT(measured, 0);
  auto p = make_predictor();
  ASSERT_TRUE(p);
  EXPECT_NE(p->calibrate(t).find("calibrated on cpu-local"), std::string::npos);
  const ReplayTable after = replay_table(*p, c, measured);
  ASSERT_TRUE(after.as_run.error.empty()) << after.as_run.error;
  EXPECT_EQ(after.as_run.schedule, "1f1b");
  EXPECT_LT(after.as_run.error_percent, 0.5) << "longer than the run it replays";
  EXPECT_GT(after.as_run.error_percent, -10.0) << "more than the hand-overs missing";
  RecordProperty("calibrated_error_percent", std::to_string(after.as_run.error_percent));
  // Each alternative at its own family's chunks per rank, as `predict` takes them: with the run's
  // one chunk, interleaved-zb was zb-h1 and looped-bfs gpipe, to the nanosecond.
  std::map<std::string, int64_t> step;
  for (const ReplayRow& r : after.alternatives)
    if (r.error.empty()) step[r.schedule] = r.step_ns;
  for (const auto& [multi, single] :
       {std::pair{"interleaved-zb", "zb-h1"}, std::pair{"looped-bfs", "gpipe"}}) {
    ASSERT_TRUE(step.count(multi) && step.count(single)) << multi;
    EXPECT_NE(step[multi], step[single]) << multi << " repeats " << single;
  }
}

// A simulated run's trace carries its configuration (`simulate --out` types it as
// RunDescriptor::sim_config, and says it as metadata "config", which the what-if does not read):
// the what-if predicts it with the config's framework and options, not the defaults
// (Korthikanti's 175B came out 12.48 s beside simulate's 13.81 s without them).
TEST(Predictor, ASimulatedRunIsPredictedWithItsOwnFrameworkAndOptions) {
  const nlohmann::json config = nlohmann::json::parse(R"({"model": {"kind": "gpt", "layers": 8,
      "hidden": 1024, "heads": 16, "seq": 1024, "vocab": 32000}, "mesh": {"pp": 2, "tp": 2},
      "batch": {"global": 8, "micro": 1}, "framework": "megatron-2022",
      "cluster": {"gpu": "a100-80gb"}, "options": {"recompute": "full",
      "sequence_parallel": true}})");
  traces::Timeline t =
      predict::simulate(predict::parse_config(config, "test"), {.expand_replicas = true}).timeline;
  t.run.sim_config = config.dump();  // as `meshscope simulate` writes it
  ASSERT_EQ(t.metadata.count("config"), 0u);
  const int64_t simulated = traces::analyze(t).step_time_ns;
  WhatIfConfig c = config_from_run(t, WhatIfConfig{});
  ASSERT_FALSE(c.config.empty());
  auto p = make_predictor();
  ASSERT_TRUE(p);
  EXPECT_EQ(traces::analyze(p->simulate(c)).step_time_ns, simulated);
  // Without it, the defaults (no recomputation): another step.
  c.config.clear();
  EXPECT_LT(traces::analyze(p->simulate(c)).step_time_ns, simulated);
}

// As `meshscope calibrate`, the viewer's calibration warns of a run whose ranks outnumbered the
// cores they shared: the run's typed cores (the recorded run below types none, and says none).
TEST(Predictor, ItsCalibrationWarnsOfRanksThatSharedTheRunsTypedCores) {
  traces::Timeline t = traces::load_trace(std::string(MESHSCOPE_SOURCE_DIR) +
                                          "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json");
  ASSERT_EQ(t.devices.size(), 2u);
  ASSERT_EQ(t.metadata.count("cores"), 0u);
  auto p = make_predictor();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->calibrate(t).find("shared"), std::string::npos);
  t.run.cores = 1;
  const std::string from = p->calibrate(t);
  EXPECT_NE(from.find("but its 2 ranks shared 1 core, so its spans include waiting"),
            std::string::npos)
      << from;
}

TEST(Predictor, SaysWhyItIsNotCalibratedFromAForeignTrace) {
  auto p = make_predictor();
  traces::Timeline kineto;
  kineto.run.source = traces::RunSource::kKineto;
  try {
    p->calibrate(kineto);
    FAIL() << "calibrated from a kineto trace";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("not calibrated"), std::string::npos) << e.what();
  }
}

// A run whose trace claims 10^7 layers had the what-if build them (calibrating, then simulating)
// until the kernel killed the viewer: both say why they do not, as `predict --config` would.
TEST(Predictor, AWorkloadPastThisProcesssMemoryIsNotBuilt) {
  auto p = make_predictor();
  ASSERT_TRUE(p);
  const auto file = std::filesystem::temp_directory_path() / "meshscope_whatif_huge_run.json";
  traces::Timeline measured = measured_cpu_run(file);  // its spans, its workload's layers claimed
  std::filesystem::remove(file);
  measured.run.workload.layers = 10'000'000;
  for (const bool calibrating : {true, false}) {
    try {
      if (calibrating) {
        p->calibrate(measured);
      } else {
        p->simulate(config_from_run(measured, WhatIfConfig{}));
      }
      FAIL() << (calibrating ? "calibrated" : "simulated");
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(calibrating ? "not calibrated: " : "not simulated: "),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("building 10000000 layers would take about"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace meshscope::gui
