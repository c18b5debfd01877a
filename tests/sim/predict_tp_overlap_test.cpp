// Tensor-parallel collectives beside GEMMs: a framework profile's tp_backward_overlap
// (Megatron-LM's column-parallel backward runs its input-gradient collective beside the
// weight-gradient GEMM and gathers its split input again beside the input-gradient GEMM) and
// options.tp_comm_overlap (Transformer Engine's userbuffers); what each leaves on the compute
// stream, in B and in I alone.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/predict/breakdown.h"
#include "sim/predict/config.h"
#include "sim/predict/resolved.h"
#include "sim/predict/search.h"
#include "sim/predict/simulate.h"
#include "sim/predict/workload_costs.h"
#include "tests/remove_at_exit.h"
#include "tests/sim/config_error.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

// One node of 8 H100s, tp 8 with sequence parallelism, 16 microbatches of one sequence.
json tp8() {
  return json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 4096, "heads": 32, "seq": 2048, "vocab": 51200},
          "mesh": {"tp": 8}, "batch": {"global": 16, "micro": 1},
          "options": {"sequence_parallel": true}, "cluster": {"gpu": "h100-sxm"}})");
}

// A profile with its data-parallel collectives exposed and tp_backward_overlap as given. Named by
// the process: ctest runs this file's tests as processes side by side, and two writing one path
// read each other's half-written file.
std::string profile(bool overlap) {
  const std::string name = overlap ? "tp-beside" : "tp-alone";
  const std::string path = meshscope::testing::process_temp_path(name + ".json").string();
  std::ofstream(path) << R"({"name": ")" << name
                      << R"(", "sources": ["test"], "grad_reduce": "exposed", "param_gather": )"
                      << R"("exposed", "tp_backward_overlap": )" << (overlap ? "true" : "false")
                      << "}";
  return path;
}

TEST(PredictTpOverlap, ACollectiveBesideAGemmAddsWhatTheGemmCannotCover) {
  // The GEMM outlasts it: only the SMs the collective holds (20% of them for 1 s) slow it.
  EXPECT_DOUBLE_EQ(beside_gemm_seconds(1.0, 3.0, 0.2), 0.2);
  // It outlasts the GEMM: the rest of it.
  EXPECT_DOUBLE_EQ(beside_gemm_seconds(3.0, 1.0, 0.2), 2.0);
  // Where the two cost the same either way (1.25 s: the GEMM at 80% of the SMs for 1 s ends at
  // 1.25 s, as the collective does).
  EXPECT_DOUBLE_EQ(beside_gemm_seconds(1.25, 1.0, 0.2), 0.25);
  EXPECT_DOUBLE_EQ(beside_gemm_seconds(1.0, 3.0, 0.0), 0.0);
}

TEST(PredictTpOverlap, TheBackwardHidesTheInputGradientsReduceScatterBehindTheWeightGradient) {
  json j = tp8();
  j["framework"] = profile(false);
  const PredictConfig alone_config = parse_config(j, "cfg.json");
  const Summary alone = simulate(alone_config, {.build_timeline = false}).summary;
  j["framework"] = profile(true);
  const PredictConfig beside_config = parse_config(j, "cfg.json");
  const Summary beside = simulate(beside_config, {.build_timeline = false}).summary;
  EXPECT_LT(beside.step_time_s, alone.step_time_s);
  // Only the tp collectives' term moves, by the step's difference (one stage, no bubble).
  const double saved =
      alone.breakdown.busy[Term::kTpCommunication] - beside.breakdown.busy[Term::kTpCommunication];
  EXPECT_NEAR(saved, alone.step_time_s - beside.step_time_s, 1e-6);
  EXPECT_DOUBLE_EQ(alone.breakdown.busy[Term::kGemm], beside.breakdown.busy[Term::kGemm]);

  // The saving, priced from the layer's own collectives and GEMMs: each layer's two reduce-
  // scatters run beside their weight-gradient GEMMs, its two gathers again beside the input-
  // gradient GEMMs, on every microbatch.
  const Resolved r(beside_config, nullptr);  // the stages, compute model and pricer simulate uses
  const cost::ComputeModel& compute = r.compute;
  const CommPricer& pricer = r.pricer;
  double per_microbatch = 0;
  int pairs = 0;
  for (const model::TpCollective& c : r.w.stages[0].tp_backward) {
    if (!c.beside) continue;
    ++pairs;
    const double s = pricer.seconds(c);
    const double extra = beside_gemm_seconds(s, compute.op_seconds(*c.beside), pricer.sm_share());
    per_microbatch += c.beside_weight_grad ? s - extra : -extra;
  }
  EXPECT_EQ(pairs, 4 * 4);  // 4 layers, each: 2 reduce-scatters, 2 gathers again
  EXPECT_GT(per_microbatch, 0);
  EXPECT_NEAR(saved, beside_config.microbatches() * per_microbatch, 1e-6);
}

TEST(PredictTpOverlap, WithTheWeightGradientApartTheReduceScatterRunsAlone) {
  // Zero-bubble schedules run the input gradient (I) without the weight gradient (W): there the
  // reduce-scatter has no weight-gradient GEMM beside it, the gather again still has its GEMM.
  json j = tp8();
  j["framework"] = profile(true);
  const PredictConfig c = parse_config(j, "cfg.json");
  const Resolved r(c, nullptr);
  const cost::ComputeModel& compute = r.compute;
  const CommPricer& pricer = r.pricer;
  const model::StageCost& s = r.w.stages[0];
  double alone = 0, beside = 0;
  for (const model::TpCollective& col : s.tp_backward) {
    const double t = pricer.seconds(col);
    alone += col.beside_weight_grad || !col.beside
                 ? t
                 : beside_gemm_seconds(t, compute.op_seconds(*col.beside), pricer.sm_share());
    beside +=
        col.beside ? beside_gemm_seconds(t, compute.op_seconds(*col.beside), pricer.sm_share()) : t;
  }
  EXPECT_NEAR(exposed_tp_seconds(s.tp_backward, s.input_grad, compute, pricer, false), alone,
              1e-12);
  EXPECT_NEAR(exposed_tp_seconds(s.tp_backward, s.input_grad, compute, pricer, true), beside,
              1e-12);
  EXPECT_GT(alone, beside);
}

// The same on Megatron-core, whose profile carries Transformer Engine's userbuffers settings.
json tp8_core(bool userbuffers) {
  json j = tp8();
  j["framework"] = "megatron-core-2024";
  j["options"]["tp_comm_overlap"] = userbuffers;
  return j;
}

using testing::error_of;

TEST(PredictTpOverlap, UserbuffersNeedSequenceParallelismAndAProfileThatHasThem) {
  EXPECT_EQ(error_of(tp8_core(true)), "");
  json j = tp8_core(true);
  j["options"]["sequence_parallel"] = false;
  EXPECT_NE(error_of(j).find("cfg.json: key 'options.tp_comm_overlap': needs "
                             "options.sequence_parallel true and mesh.tp > 1"),
            std::string::npos)
      << error_of(j);
  j = tp8_core(true);
  j["mesh"] = {{"dp", 8}};
  EXPECT_NE(error_of(j).find("key 'options.tp_comm_overlap': needs"), std::string::npos);
  j = tp8_core(true);
  j["framework"] = "megatron-2022";
  EXPECT_NE(error_of(j).find("key 'options.tp_comm_overlap': framework 'megatron-2022' has no "
                             "userbuffers overlap (its profile's tp_comm_overlap); give the run's "
                             "own in options.tp_comm_overlap_cfg"),
            std::string::npos)
      << error_of(j);
}

TEST(PredictTpOverlap, UserbuffersHideTheForwardsCollectivesToo) {
  // With the backward's async collectives alone (off) against every collective of the layer
  // beside a GEMM (on): the tp term shrinks, the GEMMs stay, the step shortens by as much.
  const Summary off = simulate(parse_config(tp8_core(false), "cfg.json"), {}).summary;
  const PredictConfig c = parse_config(tp8_core(true), "cfg.json");
  const Summary on = simulate(c, {}).summary;
  const double saved =
      off.breakdown.busy[Term::kTpCommunication] - on.breakdown.busy[Term::kTpCommunication];
  EXPECT_GT(saved, 0);
  EXPECT_NEAR(saved, off.step_time_s - on.step_time_s, 1e-6);
  EXPECT_DOUBLE_EQ(off.breakdown.busy[Term::kGemm], on.breakdown.busy[Term::kGemm]);
  // A pipelined reduce-scatter leaves its last chunk (1/4) after the GEMM and overlaps 3/4 of
  // each: priced as such in the forward.
  const Resolved r(c, nullptr);
  const cost::ComputeModel& compute = r.compute;
  const CommPricer& pricer = r.pricer;
  const model::StageCost& s = r.w.stages[0];
  double want = 0;
  int pipelined = 0;
  for (const model::TpCollective& col : s.tp_forward) {
    const double m = pricer.seconds(col);
    if (!col.beside) {
      want += m;
      continue;
    }
    const double g = compute.op_seconds(*col.beside);
    const double share = pricer.sm_share(col.sms);
    if (col.tail_share > 0) {
      ++pipelined;
      EXPECT_DOUBLE_EQ(col.tail_share, 0.25);
      EXPECT_EQ(col.sms, 16);
      want += beside_gemm_seconds(0.75 * m, 0.75 * g, share) + 0.25 * m;
    } else {
      EXPECT_EQ(col.sms, 1);  // a ring exchange
      want += beside_gemm_seconds(m, g * 7 / 8, share);
    }
  }
  EXPECT_EQ(pipelined, 2 * 4);  // proj and fc2 in each of 4 layers
  EXPECT_NEAR(exposed_tp_seconds(s.tp_forward, s.forward, compute, pricer, false), want, 1e-12);
}

// TE's defaults as megatron-core-2024 has them, with the pipelined GEMMs' SMs as given (NeMo's
// tuned settings for Llama 3 70B give proj_fprop 24 and fc2_fprop 16).
json ub_cfg(int pipeline_sms) {
  json cfg;
  for (const char* g : {"qkv_fprop", "fc1_fprop", "proj_dgrad", "fc2_dgrad"})
    cfg[g] = {{"method", "ring_exchange"}};
  for (const char* g : {"proj_fprop", "fc2_fprop"})
    cfg[g] = {{"method", "pipeline"}, {"num_sm", pipeline_sms}, {"num_splits", 4}};
  for (const char* g : {"qkv_dgrad", "qkv_wgrad", "fc1_dgrad", "fc1_wgrad"})
    cfg[g] = {{"method", "bulk"}, {"num_sm", 16}};
  return cfg;
}

TEST(PredictTpOverlap, ARunsOwnUserbuffersSettingsReplaceTheProfiles) {
  const double profiles =
      simulate(parse_config(tp8_core(true), "cfg.json"), {}).summary.step_time_s;
  json j = tp8_core(true);
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(16);  // the profile's own settings, written out
  EXPECT_DOUBLE_EQ(simulate(parse_config(j, "cfg.json"), {}).summary.step_time_s, profiles);
  // More SMs held by the pipelined reduce-scatters: their GEMMs run on fewer, the step lengthens.
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(64);
  const PredictConfig c = parse_config(j, "cfg.json");
  ASSERT_TRUE(c.tp_comm_overlap_cfg.has_value());
  EXPECT_GT(simulate(c, {}).summary.step_time_s, profiles);
  // A profile without settings of its own runs the config's.
  j["framework"] = "megatron-2022";
  EXPECT_EQ(error_of(j), "");
}

TEST(PredictTpOverlap, ARunsOwnUserbuffersSettingsAreCheckedLikeAProfiles) {
  json j = tp8_core(false);
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(16);
  EXPECT_NE(error_of(j).find("cfg.json: key 'options.tp_comm_overlap_cfg': needs "
                             "options.tp_comm_overlap true"),
            std::string::npos)
      << error_of(j);
  j = tp8_core(true);
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(16);
  j["options"]["tp_comm_overlap_cfg"]["proj_fprop"].erase("num_splits");
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.tp_comm_overlap_cfg.proj_fprop.num_splits': "
            "missing (a pipeline's chunks)");
  j["options"]["tp_comm_overlap_cfg"] = 7;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.tp_comm_overlap_cfg': must map each GEMM (qkv_fprop, ...) to "
            "its settings");
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(16);
  j["options"]["tp_comm_overlap_cfg"]["qkv_wgrad"]["num_sm"] = 0;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.tp_comm_overlap_cfg.qkv_wgrad.num_sm': must be a "
            "whole number of SMs in [1, 1024]");
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(16);
  j["options"]["tp_comm_overlap_cfg"]["fc2_dgrad"]["aggregate"] = 1;  // as NeMo's cfgs write it
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.tp_comm_overlap_cfg.fc2_dgrad.aggregate': "
            "Transformer Engine's setting, which the model does not price (it reads "
            "method, num_sm and num_splits): leave it out");
  j["options"]["tp_comm_overlap_cfg"] = ub_cfg(16);
  j["options"]["tp_comm_overlap_cfg"]["fc2_wgrad"] = {{"method", "bulk"}, {"num_sm", 4}};
  EXPECT_NE(error_of(j).find("options.tp_comm_overlap_cfg.fc2_wgrad"), std::string::npos)
      << error_of(j);
}

TEST(PredictTpOverlap, SearchKeepsUserbuffersOnlyWhereSequenceParallelismRuns) {
  // --search tries meshes without tp too; there the option is off, as the config parser would
  // require.
  const PredictConfig c = parse_config(tp8_core(true), "cfg.json");
  SearchOptions o;
  o.gpus = 8;
  int with = 0, without = 0;
  for (const PredictConfig& k : search_space(c, o)) {
    EXPECT_EQ(k.tp_comm_overlap, k.mesh.tp > 1) << k.mesh.tp;
    (k.tp_comm_overlap ? with : without) += 1;
  }
  EXPECT_GT(with, 0);
  EXPECT_GT(without, 0);
}

}  // namespace
}  // namespace meshscope::predict
