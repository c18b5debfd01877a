// `predict --breakdown`: a device's step split into the cost model's terms. The terms must add up
// to the compute time the engine ran for that device, each term must come from the part of the
// model it names, and the rest of the step is its idle time.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/predict/breakdown.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;

// A small GPT on 4 pipeline ranks of 2 tp ranks: a bubble, tp collectives, attention, norms.
json pipeline(const std::string& recompute = "none") {
  json j = json::parse(
      R"({"model": {"kind": "gpt", "layers": 8, "hidden": 2048, "heads": 16, "seq": 2048, "vocab": 32000},
          "mesh": {"dp": 1, "tp": 2, "pp": 4}, "batch": {"global": 8, "micro": 1}, "schedule": "1f1b",
          "framework": "megatron-2022", "cluster": {"gpu": "a100-80gb"},
          "options": {"sequence_parallel": true}})");
  j["options"]["recompute"] = recompute;
  return j;
}

Summary run(const json& j) {
  return simulate(parse_config(j, "cfg.json"), {.build_timeline = false}).summary;
}

TEST(PredictBreakdown, TermsAndIdleAddUpToTheStepOfTheDeviceDescribed) {
  const Summary s = run(pipeline());
  const Breakdown& b = s.breakdown;
  ASSERT_TRUE(b.known);
  EXPECT_DOUBLE_EQ(b.step_s, s.step_time_s);
  // The terms are the engine's compute time for that device up to each action's rounding to ns.
  EXPECT_LT(std::abs(b.other_s), 1e-7) << b.other_s;
  EXPECT_NEAR(b.busy.total() + b.other_s + b.idle_s, b.step_s, 1e-12 * b.step_s);
  // 1F1B over 4 ranks and 8 microbatches leaves every device idle for part of the step.
  EXPECT_GT(b.idle_s, 0.1 * b.step_s);
  EXPECT_GT(b.busy[Term::kGemm], b.busy[Term::kAttention]);
  for (Term t : {Term::kAttention, Term::kNorm, Term::kElementwise, Term::kTpCommunication,
                 Term::kOptimizerStep})
    EXPECT_GT(b.busy[t], 0) << name(t);
  EXPECT_EQ(b.busy[Term::kRecompute], 0);
  EXPECT_EQ(b.busy[Term::kShardedCopies], 0);
  EXPECT_GT(b.communication_s, 0);  // its activations and gradients to and from its neighbours
}

// Under a calibration the engine prices a fitted phase as a whole (overhead + scale x the op
// model, or overhead + FLOPs / rate): the terms share that time in the op model's proportions, so
// they still add up to what the engine ran (the GEMMs had read 147.5% of a calibrated step and
// "other compute" -60%).
TEST(PredictBreakdown, ACalibratedStepsTermsAddUpToItsComputeToo) {
  cost::Calibration cal;
  cal.phases[static_cast<size_t>(traces::Phase::kForward)] = {.overhead_ns = 50'000,
                                                              .model_scale = 2.5};
  cal.phases[static_cast<size_t>(traces::Phase::kBackward)] = {.flops_per_s = 5e13,
                                                               .overhead_ns = 80'000};
  SimulateOptions o;
  o.build_timeline = false;
  o.calibration = &cal;
  const Summary calibrated = simulate(parse_config(pipeline(), "cfg.json"), o).summary;
  const Breakdown& b = calibrated.breakdown;
  ASSERT_TRUE(b.known);
  EXPECT_LT(std::abs(b.other_s), 1e-6 * b.step_s) << b.other_s;
  EXPECT_NEAR(b.busy.total() + b.other_s + b.idle_s, b.step_s, 1e-9 * b.step_s);
  const Summary plain = run(pipeline());
  EXPECT_GT(b.busy[Term::kGemm], 0);
  EXPECT_NE(b.busy[Term::kGemm], plain.breakdown.busy[Term::kGemm]);  // it moved with the fit
}

TEST(PredictBreakdown, TheDeviceDescribedIsTheBusiestPipelineRank) {
  // The last stage also runs the output layer and the loss: it computes the most.
  const Summary s = run(pipeline());
  EXPECT_EQ(s.breakdown.pp, 3);
  EXPECT_GT(s.breakdown.busy[Term::kLoss], 0);
}

TEST(PredictBreakdown, RecomputationIsItsOwnTermAndAllThatChanges) {
  const Breakdown none = run(pipeline("none")).breakdown;
  const Breakdown full = run(pipeline("full")).breakdown;
  EXPECT_GT(full.busy[Term::kRecompute], 0);
  // Full recomputation runs each layer's forward again, its tp collectives with it: the compute
  // grew by the recompute term and the extra tp time, every other term unchanged.
  const double more_tp = full.busy[Term::kTpCommunication] - none.busy[Term::kTpCommunication];
  EXPECT_GT(more_tp, 0);
  EXPECT_NEAR(full.busy.total() - none.busy.total(), full.busy[Term::kRecompute] + more_tp,
              1e-9 * full.busy.total());
  for (Term t : {Term::kGemm, Term::kAttention, Term::kNorm, Term::kElementwise, Term::kLoss})
    EXPECT_DOUBLE_EQ(full.busy[t], none.busy[t]) << name(t);
}

TEST(PredictBreakdown, TpCollectivesOnlyWithTp) {
  json j = pipeline();
  j["mesh"]["tp"] = 1;
  EXPECT_EQ(run(j).breakdown.busy[Term::kTpCommunication], 0);
}

TEST(PredictBreakdown, ZeroThreeCopiesOnlyUnderZeroThree) {
  json j = json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 2048, "heads": 16, "seq": 2048, "vocab": 32000},
          "mesh": {"dp": 8}, "batch": {"global": 16, "micro": 1}, "schedule": "dp",
          "framework": "torchtitan", "cluster": {"gpu": "a100-80gb"}, "options": {"zero": 3}})");
  const Breakdown z3 = run(j).breakdown;
  EXPECT_GT(z3.busy[Term::kShardedCopies], 0);
  EXPECT_LT(std::abs(z3.other_s), 1e-7);
  j["options"]["zero"] = 0;  // DDP: nothing gathered, nothing copied
  EXPECT_EQ(run(j).breakdown.busy[Term::kShardedCopies], 0);
  // Pipelined, torchtitan gathers and reduces once a step (docs/ACCURACY.md item 44): the copies
  // the terms give are those the stage times hold, so they still account for every action's time.
  j["options"]["zero"] = 3;
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["schedule"] = "1f1b";
  j["batch"]["global"] = 32;  // 8 microbatches a replica
  const Breakdown once = run(j).breakdown;
  EXPECT_GT(once.busy[Term::kShardedCopies], 0);
  EXPECT_LT(std::abs(once.other_s), 1e-7);
}

// FSDP over eight nodes of A100s: every layer's parameters gathered and its gradients
// reduce-scattered over 64 ranks, which torchtitan overlaps with compute.
json fsdp_eight_nodes() {
  return json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 4096, "heads": 32, "seq": 4096, "vocab": 32000},
          "mesh": {"dp": 64}, "batch": {"global": 128, "micro": 2}, "schedule": "dp",
          "framework": "torchtitan", "cluster": {"gpu": "a100-80gb"}, "options": {"zero": 3}})");
}

TEST(PredictBreakdown, DataParallelCollectivesGiveTheirTimeOnTheLinksAndWhatTheStepPaysForThem) {
  const Breakdown b = run(fsdp_eight_nodes()).breakdown;
  ASSERT_GT(b.dp_collectives_wire_s, 0);
  // Overlapped: most of it hides; what hides costs the compute beside it the SMs its thread
  // blocks hold (a100-80gb: collective_ctas 24 of 108 SMs).
  EXPECT_GT(b.dp_collectives_exposed_s, 0);
  EXPECT_LT(b.dp_collectives_exposed_s, 0.5 * b.dp_collectives_wire_s);
  EXPECT_NEAR(b.dp_collectives_charged_s,
              b.dp_collectives_exposed_s +
                  24.0 / 108.0 * (b.dp_collectives_wire_s - b.dp_collectives_exposed_s),
              1e-9 * b.dp_collectives_wire_s);
  // A single replica's step waits for them (nothing to run beside them but the optimizer step):
  // what they are charged is the step's idle time and, for the SMs the hidden part held, the
  // compute time that added (the engine puts it on the compute that follows: here the optimizer
  // step).
  EXPECT_GT(b.sm_held_s, 0);
  EXPECT_NEAR(b.idle_s + b.sm_held_s, b.dp_collectives_charged_s, 1e-6 * b.step_s);

  // The same run on a node network a quarter of the catalog's (eight 200 Gb/s NICs a node, 1600
  // Gb/s): the rings cross eight nodes and their time is mostly the network's, so it takes nearly
  // four times as long (the NVLink hops inside each node and the latencies do not slow down).
  json slow = fsdp_eight_nodes();
  slow["cluster"]["network_gbps"] = 400;
  const Breakdown q = run(slow).breakdown;
  const double ratio = q.dp_collectives_wire_s / b.dp_collectives_wire_s;
  EXPECT_GT(ratio, 3.5);
  EXPECT_LE(ratio, 4.0);
  EXPECT_GT(q.dp_collectives_charged_s, b.dp_collectives_charged_s);

  // A framework that runs them alone (deepspeed-megatron: grad_reduce exposed, overlap_comm off)
  // is charged all of it.
  json alone = fsdp_eight_nodes();
  alone["framework"] = "deepspeed-megatron";
  alone["options"]["zero"] = 1;
  const Breakdown m = run(alone).breakdown;
  ASSERT_GT(m.dp_collectives_wire_s, 0);
  EXPECT_DOUBLE_EQ(m.dp_collectives_exposed_s, m.dp_collectives_wire_s);
  EXPECT_DOUBLE_EQ(m.dp_collectives_charged_s, m.dp_collectives_wire_s);

  // No data parallelism, no data-parallel collectives.
  const Breakdown none = run(pipeline()).breakdown;
  EXPECT_EQ(none.dp_collectives_wire_s, 0);
  EXPECT_EQ(none.dp_collectives_charged_s, 0);

  const json j = to_json(run(fsdp_eight_nodes()))["breakdown"]["dp_collectives"];
  EXPECT_DOUBLE_EQ(j["wire_s"].get<double>(), b.dp_collectives_wire_s);
  EXPECT_DOUBLE_EQ(j["exposed_s"].get<double>(), b.dp_collectives_exposed_s);
  EXPECT_DOUBLE_EQ(j["charged_s"].get<double>(), b.dp_collectives_charged_s);
}

TEST(PredictBreakdown, CollectivesTheEngineRunsBesideComputeSlowItByTheSMsTheyHold) {
  // Llama 3's layout in small: an interleaved pipeline of one-layer chunks over 8 ranks across
  // nodes, replicated over 8 nodes. Each chunk's gradient reduction is too small a share of its own
  // backward to be priced as hidden behind it, so it is priced in full and the engine runs it
  // beside the other chunks' compute, which its thread blocks slow (h100-sxm: collective_ctas 32
  // of 132 SMs).
  const json j = json::parse(
      R"({"model": {"kind": "gpt", "layers": 16, "hidden": 4096, "heads": 32, "seq": 4096, "vocab": 32000},
          "mesh": {"dp": 8, "tp": 1, "pp": 8}, "batch": {"global": 128, "micro": 1},
          "schedule": "interleaved", "virtual_stages": 2, "framework": "llama3-2024",
          "cluster": {"gpu": "h100-sxm"}, "options": {"zero": 1}})");
  const Breakdown b = run(j).breakdown;
  ASSERT_GT(b.dp_collectives_wire_s, 0);
  EXPECT_DOUBLE_EQ(b.dp_collectives_charged_s, b.dp_collectives_wire_s);
  EXPECT_GT(b.sm_held_s, 0);
  // No more than the share they hold for as long as they run.
  EXPECT_LE(b.sm_held_s, 32.0 / 132.0 * b.dp_collectives_wire_s);
  // The engine's compute time for the device is the terms and that.
  EXPECT_LT(std::abs(b.other_s), 1e-7) << b.other_s;
  EXPECT_NEAR(b.busy.total() + b.sm_held_s + b.other_s + b.idle_s, b.step_s, 1e-12 * b.step_s);
  EXPECT_DOUBLE_EQ(to_json(run(j))["breakdown"]["collectives_sm_held_s"].get<double>(),
                   b.sm_held_s);
  // Chunks of four layers: each reduction is priced as hidden behind its own chunk's backward
  // but for one layer's share, its SMs charged on the part that hid (DataParallelCollectives...
  // above): no more than the price says, and less where a reduction found its stream still busy
  // with the one before and hid less.
  json deeper = j;
  deeper["model"]["layers"] = 64;
  const Breakdown h = run(deeper).breakdown;
  EXPECT_LT(h.dp_collectives_exposed_s, h.dp_collectives_wire_s);
  EXPECT_GT(h.sm_held_s, 0);
  EXPECT_LE(h.sm_held_s, h.dp_collectives_charged_s - h.dp_collectives_exposed_s);
}

TEST(PredictBreakdown, JsonCarriesEveryTermAndNullWhenTheStepWasNotSimulated) {
  const Summary s = run(pipeline());
  const json j = to_json(s)["breakdown"];
  EXPECT_EQ(j["pp"], 3);
  EXPECT_DOUBLE_EQ(j["compute_s"]["gemm"].get<double>(), s.breakdown.busy[Term::kGemm]);
  EXPECT_EQ(j["compute_s"].size(), static_cast<size_t>(Term::kCount));
  EXPECT_DOUBLE_EQ(j["idle_s"].get<double>(), s.breakdown.idle_s);
  // 64 sequences of 8192 tokens a microbatch at hidden 4096 do not fit an A100's 80 GB: the
  // engine is skipped.
  json big = pipeline();
  big["model"]["seq"] = 8192;
  big["model"]["hidden"] = 4096;
  big["model"]["heads"] = 32;
  big["batch"] = {{"global", 64}, {"micro", 64}};
  const Summary skipped = simulate(parse_config(big, "big.json"),
                                   {.build_timeline = false, .engine_only_if_fits = true})
                              .summary;
  ASSERT_FALSE(skipped.fits);
  EXPECT_FALSE(skipped.breakdown.known);
  EXPECT_TRUE(to_json(skipped)["breakdown"].is_null());
  const Summary unasked =
      simulate(parse_config(pipeline(), "cfg.json"), {.build_timeline = false, .breakdown = false})
          .summary;
  EXPECT_FALSE(unasked.breakdown.known);
  EXPECT_DOUBLE_EQ(unasked.step_time_s, s.step_time_s);
}

}  // namespace
}  // namespace meshscope::predict
