#include "sim/predict/simulate.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/predict/memory.h"
#include "sim/predict/search.h"
#include "sim/schedule/schedule_text.h"
#include "tests/sim/predict_profile_fixture.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"

namespace meshscope::predict {
namespace {

// A gpt of `layers` layers of h = `hidden` with `heads` heads (sequence 1024, vocabulary 32000) on
// `mesh` of `gpu`s, `global_batch` samples a step in microbatches of `micro_batch`.
PredictConfig gpt_config(int64_t layers, int64_t hidden, int64_t heads, mesh::MeshShape mesh,
                         int64_t global_batch, int64_t micro_batch, const std::string& gpu) {
  PredictConfig c;
  c.gpt.layers = layers;
  c.gpt.hidden = hidden;
  c.gpt.heads = heads;
  c.gpt.seq = 1024;
  c.gpt.vocab = 32000;
  c.mesh = mesh;
  c.global_batch = global_batch;
  c.micro_batch = micro_batch;
  c.gpu = gpu;
  return c;
}

// ZeRO-3 data parallelism of a GPT (sequence 2048, vocabulary 50304) on `dp` `gpu`s, `per_node` a
// node, under `framework`.
PredictConfig zero3_gpt(int64_t layers, int64_t hidden, int64_t heads, int dp, int64_t global_batch,
                        int64_t micro_batch, const std::string& gpu, const std::string& framework,
                        int per_node) {
  PredictConfig c = gpt_config(layers, hidden, heads, {dp, 1, 1}, global_batch, micro_batch, gpu);
  c.gpt.seq = 2048;
  c.gpt.vocab = 50304;
  c.framework = framework;
  c.schedule = schedule::Family::kDataParallel;
  c.zero = 3;
  c.gpus_per_node = per_node;
  return c;
}

PredictConfig small_gpt() { return gpt_config(8, 1024, 16, {2, 4, 2}, 32, 2, "h100-sxm"); }

TEST(PredictSimulate, FiguresAreConsistentWithTheStepTime) {
  const PredictConfig c = small_gpt();
  const Simulation sim = simulate(c);
  const Summary& s = sim.summary;
  ASSERT_GT(s.step_time_s, 0);
  EXPECT_EQ(s.gpus, 16);
  EXPECT_EQ(s.microbatches, 8);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 32.0 * 1024 / s.step_time_s);
  EXPECT_NEAR(s.mfu, s.tflops_per_gpu * 1e12 / 989.4e12, 1e-12);
  EXPECT_GT(s.bubble_fraction, 0);
  EXPECT_LT(s.bubble_fraction, 1);
  EXPECT_TRUE(s.fits);
  EXPECT_EQ(s.memory.size(), 4u);
  // 1F1B: the first stage holds the most activations.
  EXPECT_GT(s.memory[0].activations_bytes, s.memory[3].activations_bytes);
  EXPECT_EQ(sim.timeline.metadata.at("source"), "sim");
}

TEST(PredictSimulate, ReplicasOnceOrAllGiveTheSameFigures) {
  PredictConfig c = small_gpt();
  c.symmetry = Symmetry::kOff;
  const Summary full = simulate(c).summary;
  c.symmetry = Symmetry::kOn;
  const Summary once = simulate(c).summary;
  EXPECT_TRUE(once.replicas_simulated_once);
  EXPECT_FALSE(full.replicas_simulated_once);
  EXPECT_EQ(full.step_time_s, once.step_time_s);
  EXPECT_DOUBLE_EQ(full.bubble_fraction, once.bubble_fraction);
  EXPECT_EQ(full.peak_memory_bytes, once.peak_memory_bytes);
  EXPECT_LT(once.simulated_actions, full.simulated_actions);
}

// ZeRO-2 under a framework whose gradient reduce-scatters start while backward runs: the SMs a
// reduction held beside compute that already ran are charged to each member's next compute. The
// dp members reach it at one instant, and which of them the engine handles first must not decide
// which compute pays: it did (a hidden backward on one rank, the optimizer step on the other),
// and every rank simulated ran up to 5.3% longer than the replicas simulated once
// (docs/ACCURACY.md item 1's equality).
TEST(PredictSimulate, ZeroTwosOverlappedReductionsChargeAlikeOnceOrOnEveryRank) {
  PredictConfig two = gpt_config(16, 4096, 32, {2, 1, 1}, 4, 1, "h100-sxm");
  two.gpt.seq = 8192;
  two.gpt.vocab = 51200;
  two.schedule = schedule::Family::kGpipe;
  PredictConfig mesh = gpt_config(16, 4096, 32, {4, 2, 2}, 32, 1, "a100-80gb");
  mesh.schedule = schedule::Family::kGpipe;
  mesh.gpus_per_node = 4;
  PredictConfig one_f_one_b = gpt_config(16, 4096, 32, {4, 2, 1}, 16, 1, "h100-sxm");
  for (PredictConfig c : {two, mesh, one_f_one_b}) {
    c.zero = 2;
    c.framework = "megatron-core-2024";
    c.symmetry = Symmetry::kOff;
    const Summary full = simulate(c).summary;
    c.symmetry = Symmetry::kOn;
    const Summary once = simulate(c).summary;
    EXPECT_EQ(full.step_time_s, once.step_time_s) << c.mesh.dp << "x" << c.mesh.pp;
    EXPECT_DOUBLE_EQ(full.bubble_fraction, once.bubble_fraction) << c.mesh.dp << "x" << c.mesh.pp;
  }
}

// simulate warns before writing a trace of gigabytes from this estimate (traces/chrome_export.h,
// whose constants come from korthikanti-175b's trace): within 15% of the trace written, on three
// other simulated traces (8 to 64 GPUs), as `meshscope simulate --out` writes them (idle spans
// added).
TEST(PredictSimulate, TheTracesEstimatedSizeIsNearWhatIsWritten) {
  SimulateOptions every_device;
  every_device.expand_replicas = true;
  for (const PredictConfig& c :
       {small_gpt(), zero3_gpt(8, 1024, 16, 8, 32, 2, "h100-sxm", "nemo-24.09", 4),
        gpt_config(24, 2048, 16, {4, 4, 4}, 256, 2, "a100-80gb")}) {
    Simulation sim = simulate(c, every_device);
    traces::add_idle_spans(sim.timeline);
    sim.timeline.sort_spans();
    const double written = static_cast<double>(traces::export_chrome_json(sim.timeline).size());
    EXPECT_NEAR(static_cast<double>(traces::estimated_chrome_bytes(sim.timeline)) / written, 1.0,
                0.15)
        << written << " bytes written for " << c.gpus() << " GPUs";
  }
}

TEST(PredictSimulate, BubblesWithoutATimelineAreTheTimelinesExactly) {
  // Figures-only runs (predict, search) take the bubble fraction from the ops' busy time instead
  // of building and analysing a Timeline: the two must agree to the last bit.
  std::vector<PredictConfig> configs;
  configs.push_back(small_gpt());  // replicas simulated once
  PredictConfig c = small_gpt();
  c.symmetry = Symmetry::kOff;  // every rank
  configs.push_back(c);
  c.schedule = schedule::Family::kZbH1;
  configs.push_back(c);
  c = small_gpt();
  c.schedule = schedule::Family::kInterleaved;
  c.virtual_stages = 2;
  c.zero = 3;
  configs.push_back(c);
  c = small_gpt();
  c.mesh = {1, 1, 4};
  c.schedule = schedule::Family::kTensorParallel;
  configs.push_back(c);
  for (const PredictConfig& cfg : configs) {
    const Summary with = simulate(cfg, {.build_timeline = true}).summary;
    const Summary without = simulate(cfg, {.build_timeline = false}).summary;
    if (cfg.mesh.pp > 1) {
      EXPECT_GT(with.bubble_fraction, 0.05);
    }
    EXPECT_EQ(with.bubble_fraction, without.bubble_fraction) << with.schedule << " " << with.mesh;
    EXPECT_EQ(with.step_time_s, without.step_time_s);
  }
}

TEST(PredictSimulate, ZeroShardsStateOverDataParallelRanks) {
  const StateBytesPerParam b = state_bytes(cost::Precision::kBf16, true);
  EXPECT_EQ(b.parameters + b.gradients + b.optimizer, 16);
  const int64_t P = 1'000'000;
  EXPECT_EQ(device_memory(P, 0, 8, 1, 0, b, 0).total(), 16 * P);
  EXPECT_EQ(device_memory(P, 0, 8, 1, 1, b, 0).total(), 4 * P + 12 * P / 8);
  EXPECT_EQ(device_memory(P, 0, 8, 1, 2, b, 0).total(), 2 * P + 14 * P / 8);
  EXPECT_EQ(device_memory(P, 0, 8, 1, 3, b, 0).total(), 16 * P / 8);
  // With a framework that waits for its collectives, the simulated step pays for ZeRO-3's
  // gathers, and memory shrinks.
  PredictConfig c = small_gpt();
  c.framework = testing::with_every_zero_stage("megatron-2022");  // its stack: stage 0 alone
  c.mesh = {8, 1, 1};
  c.micro_batch = 1;
  const Summary z0 = simulate(c).summary;
  c.zero = 3;
  const Summary z3 = simulate(c).summary;
  EXPECT_LT(z3.peak_memory_bytes, z0.peak_memory_bytes);
  EXPECT_GT(z3.step_time_s, z0.step_time_s);
  // One that prefetches gathers and overlaps reductions (framework.h) hides most of that.
  c.framework = "megatron-core-2024";
  const Summary z3_overlapped = simulate(c).summary;
  EXPECT_LT(z3_overlapped.step_time_s, z3.step_time_s);
}

// ZeRO-1 reduces the gradients once a step; ZeRO-2 keeps only its shard between microbatches, so
// it reduces each microbatch's gradients after that microbatch's backward (DeepSpeed's stage 2,
// FSDP without no_sync; docs/ACCURACY.md item 43), and ZeRO-3 does too. Each all-gathers the
// updated parameters; ZeRO-3 also before every forward and backward.
TEST(PredictSimulate, ZeroTwoReducesEachMicrobatchsGradientsZeroOneOnceAStep) {
  PredictConfig c = small_gpt();  // dp 2, pp 4, 8 microbatches a replica
  // Reductions waited for, each costing the step its time: megatron-2022's figures, with every
  // ZeRO stage (its own stack runs none but 0).
  c.framework = testing::with_every_zero_stage("megatron-2022");
  struct Count {
    int reduce_scatters = 0, all_gathers = 0, all_reduces = 0;
  };
  auto dp_collectives = [](const schedule::Schedule& s, int rank) {
    Count n;
    for (const schedule::Action& a : s.ranks.at(rank)) {
      if (a.group != mesh::GroupKind::kDp) continue;
      n.reduce_scatters += a.kind == schedule::ActionKind::kReduceScatter;
      n.all_gathers += a.kind == schedule::ActionKind::kAllGather;
      n.all_reduces += a.kind == schedule::ActionKind::kAllReduce;
    }
    return n;
  };
  std::vector<Simulation> by_stage;
  for (int zero = 0; zero <= 3; ++zero) {
    c.zero = zero;
    by_stage.push_back(simulate(c, {.build_timeline = false}));
  }
  const int m = by_stage[0].summary.microbatches;
  ASSERT_EQ(m, 8);
  for (int rank = 0; rank < 4; ++rank) {
    const Count z0 = dp_collectives(by_stage[0].schedule, rank),
                z1 = dp_collectives(by_stage[1].schedule, rank),
                z2 = dp_collectives(by_stage[2].schedule, rank),
                z3 = dp_collectives(by_stage[3].schedule, rank);
    EXPECT_EQ(z0.all_reduces, 1) << rank;
    EXPECT_EQ(z0.reduce_scatters + z0.all_gathers, 0) << rank;
    EXPECT_EQ(z1.reduce_scatters, 1) << rank;
    EXPECT_EQ(z1.all_gathers, 1) << rank;
    EXPECT_EQ(z2.reduce_scatters, m) << rank;
    EXPECT_EQ(z2.all_gathers, 1) << rank;
    EXPECT_EQ(z3.reduce_scatters, m) << rank;
    EXPECT_EQ(z3.all_gathers, 2 * m) << rank;
    EXPECT_EQ(z1.all_reduces + z2.all_reduces + z3.all_reduces, 0) << rank;
  }
  // Eight reductions waited for cost more than one; the gradients ZeRO-2 shards are its saving.
  EXPECT_GT(by_stage[2].summary.step_time_s, by_stage[1].summary.step_time_s);
  EXPECT_LT(by_stage[2].summary.peak_memory_bytes, by_stage[1].summary.peak_memory_bytes);
  // With one microbatch a step there is one reduction either way, after the one backward.
  c.global_batch = c.mesh.dp * c.micro_batch;
  c.zero = 1;
  const Summary one_z1 = simulate(c, {.build_timeline = false}).summary;
  c.zero = 2;
  const Summary one_z2 = simulate(c, {.build_timeline = false}).summary;
  ASSERT_EQ(one_z2.microbatches, 1);
  EXPECT_EQ(one_z2.step_time_s, one_z1.step_time_s);
}

TEST(PredictSimulate, FasterComputeNeverSlowsAStepBoundByItsReductions) {
  // ZeRO-2 on 16 GPUs over two nodes of 100 Gb/s: each microbatch's reduce-scatter takes longer
  // than its backward, so the reductions queue on the collective stream and bound the step. Priced
  // as what each one's own backward leaves exposed, a faster GPU made the step longer (stop 59's
  // metamorphic checks: b200 with twice its peak 2.4% slower here); each reduction now hides only
  // behind what its stream had time for (engine::CollectiveOverlap).
  PredictConfig c = gpt_config(32, 4096, 32, {16, 1, 1}, 32, 1, "b200-sxm");
  c.gpt.ffn = 11008;
  c.gpt.gated_mlp = true;
  c.gpt.seq = 4096;
  c.framework = "llm-foundry";
  c.schedule = schedule::Family::kDataParallel;
  c.zero = 2;
  c.gpus_per_node = 8;
  c.network_gbps = 100;
  c.recompute = model::Recompute::kFull;
  const Simulation base = simulate(c, {.build_timeline = false});
  ASSERT_EQ(base.summary.microbatches, 2);
  cost::Hardware faster = cost::find_hardware("b200-sxm");
  for (double& peak : faster.peak_flops) peak *= 2;
  c.hardware = {c.gpu, std::make_shared<const cost::Hardware>(faster)};
  const Simulation fast = simulate(c, {.build_timeline = false});
  EXPECT_LT(fast.summary.breakdown.busy[Term::kGemm], base.summary.breakdown.busy[Term::kGemm]);
  EXPECT_LE(fast.summary.step_time_s, base.summary.step_time_s);
  // One stream runs a rank's reductions one after another: the step holds their wire time.
  for (const Simulation* s : {&base, &fast})
    EXPECT_GE(s->summary.step_time_s, s->summary.breakdown.dp_collectives_wire_s);
}

TEST(PredictSimulate, ZeroThreesGathersHoldTheirStreamForAllOfTheirTime) {
  // ZeRO-3 of a 125M GPT over 8 B200 (nemo-24.09 overlaps its gathers and reductions): each
  // forward and backward may start before its gather ends, but the stream carries all of every
  // gather and reduce-scatter, one after another, so the step holds their time on the wire.
  // Before item 54 it was 6% shorter than that (0.0186 s against 0.0198 s), and twice the peak
  // or an H200 for the H100 gave a slower step in such configs.
  PredictConfig c = zero3_gpt(12, 768, 12, 8, 32, 1, "b200-sxm", "nemo-24.09", 4);
  const Summary base = simulate(c, {.build_timeline = false}).summary;
  EXPECT_GE(base.step_time_s, base.breakdown.dp_collectives_wire_s);
  cost::Hardware faster = cost::find_hardware("b200-sxm");
  for (double& peak : faster.peak_flops) peak *= 2;
  c.hardware = {c.gpu, std::make_shared<const cost::Hardware>(faster)};
  EXPECT_LE(simulate(c, {.build_timeline = false}).summary.step_time_s, base.step_time_s);
  c.hardware = {};
  c.gpu = "h100-sxm";
  const double h100 = simulate(c, {.build_timeline = false}).summary.step_time_s;
  c.gpu = "h200-sxm";
  EXPECT_LE(simulate(c, {.build_timeline = false}).summary.step_time_s, h100);
}

TEST(PredictSimulate, ABackwardsGatherHidesBehindThatBackward) {
  // ZeRO-3 of a 24-layer GPT over 64 H100 (fms-fsdp, eight nodes at 400 Gb/s a node): the
  // gather before the backward hides behind the backward it feeds (FSDP's backward prefetch). When
  // it was priced against the forward, fewer norm passes (a shorter forward, the same backward)
  // made the step 1.1% longer (item 55).
  PredictConfig c = zero3_gpt(24, 1024, 16, 64, 128, 2, "h100-sxm", "fms-fsdp", 8);
  c.network_gbps = 400;
  const double stock = simulate(c, {.build_timeline = false}).summary.step_time_s;
  cost::Framework fewer = cost::find_framework("fms-fsdp");
  ASSERT_GT(fewer.passes.norm, 9);
  fewer.passes.norm = 9;
  c.profile = {c.framework, std::make_shared<const cost::Framework>(fewer)};
  EXPECT_LE(simulate(c, {.build_timeline = false}).summary.step_time_s, stock);
}

TEST(PredictSimulate, ConfigsThatDoNotFitAreFlagged) {
  const PredictConfig c = gpt_config(96, 12288, 96, {1, 1, 1}, 1, 1, "a100-80gb");
  EXPECT_FALSE(simulate(c, {.build_timeline = false}).summary.fits);
}

TEST(PredictSimulate, SearchReturnsFittingConfigurationsFastestFirst) {
  PredictConfig base = small_gpt();
  SearchOptions o;
  o.gpus = 8;
  o.micro_batches = {1, 2};
  const auto found = search(base, o);
  ASSERT_FALSE(found.empty());
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_TRUE(found[i].summary.fits);
    EXPECT_EQ(found[i].summary.gpus, 8);
    if (i > 0) {
      EXPECT_LE(found[i - 1].summary.step_time_s, found[i].summary.step_time_s);
    }
  }
}

TEST(PredictSimulate, SearchSpaceCoversEveryFactorisationAndRefusesAbsurdBudgets) {
  PredictConfig c = small_gpt();  // 8 layers, h100 nodes of 8
  c.global_batch = 3 << 12;       // divisible by every dp of 12 GPUs
  SearchOptions o;
  o.gpus = 12;
  o.micro_batches = {1};
  std::set<std::tuple<int, int, int>> meshes;
  for (const PredictConfig& p : search_space(c, o)) {
    EXPECT_EQ(int64_t{p.mesh.dp} * p.mesh.pp * p.mesh.tp, 12);
    meshes.insert({p.mesh.dp, p.mesh.pp, p.mesh.tp});
  }
  // 12 = dp x pp x tp has 18 ordered factorisations; tp <= 8 GPUs per node drops tp 12, pp <= 8
  // layers drops pp 12.
  EXPECT_EQ(meshes.size(), 16u);
  EXPECT_TRUE(meshes.count({1, 4, 3}));
  o.gpus = int64_t{1} << 40;  // enumerating its divisors one by one took minutes
  EXPECT_THROW(search_space(c, o), std::invalid_argument);
}

TEST(PredictSimulate, ContextParallelSplitsTheSequence) {
  PredictConfig c = small_gpt();
  c.gpt.seq = 8192;
  c.mesh = {1, 2, 2};
  const Summary one = simulate(c).summary;
  c.cp = 2;
  const Summary two = simulate(c).summary;
  EXPECT_EQ(two.gpus, 2 * one.gpus);
  // Each rank holds half the tokens: about half the activations, and a faster step.
  EXPECT_NEAR(
      static_cast<double>(two.memory[0].activations_bytes) / one.memory[0].activations_bytes, 0.5,
      0.05);
  EXPECT_LT(two.step_time_s, one.step_time_s);
}

TEST(PredictSimulate, ExpertParallelShardsExpertsAndAddsAllToAlls) {
  PredictConfig c = small_gpt();
  c.gpt.experts = 8;
  c.gpt.top_k = 2;
  c.mesh = {8, 1, 1};
  c.gpus_per_node = 2;  // the expert group crosses nodes
  c.global_batch = 16;
  c.micro_batch = 1;
  auto forward_ns = [](const Simulation& s) {
    for (const traces::Span& sp : s.timeline.spans)
      if (sp.kind == traces::SpanKind::kCompute && sp.phase == traces::Phase::kForward)
        return sp.duration_ns();
    return int64_t{0};
  };
  const Simulation ep1 = simulate(c);
  c.ep = 4;
  const Simulation ep4 = simulate(c);
  // Experts are sharded four ways; each forward now waits for its dispatch and combine.
  EXPECT_LT(ep4.summary.memory[0].parameters_bytes, ep1.summary.memory[0].parameters_bytes / 2);
  EXPECT_GT(forward_ns(ep4), forward_ns(ep1));
}

// Each rank's optimizer step updates the states it holds: under ZeRO-1 with ep = dp the dense
// states are sharded dp ways and each expert's not at all (its replicas, dp / ep, are one), as
// device_memory counts them. The step had divided the experts' too by dp (8 times too short here).
TEST(PredictSimulate, TheOptimizerStepUpdatesTheExpertStatesARankHolds) {
  PredictConfig c = small_gpt();
  c.gpt.experts = 8;
  c.gpt.top_k = 2;
  c.mesh = {8, 1, 1};
  c.ep = 8;
  c.global_batch = 16;
  c.micro_batch = 1;
  const auto step_and_states = [&](int zero) {
    c.zero = zero;
    const Simulation s = simulate(c);
    return std::pair{s.summary.breakdown.busy[Term::kOptimizerStep],
                     static_cast<double>(s.summary.memory[0].optimizer_bytes)};
  };
  const auto [whole_s, whole_bytes] = step_and_states(0);
  const auto [sharded_s, sharded_bytes] = step_and_states(1);
  ASSERT_GT(whole_s, 0);
  EXPECT_NEAR(sharded_s / whole_s, sharded_bytes / whole_bytes, 0.01);
  EXPECT_GT(sharded_s / whole_s, 0.2);  // most of the states are the experts', unsharded
}

// ZeRO-3 gathers and reduces a stage's parameters layer by layer, each collective with its own
// latency, also where some of them are experts: with ep 2 and a 0.06% expert share the dp
// collectives take what they take with ep 1 (they had been priced as one collective: -66%).
TEST(PredictSimulate, ZeroThreesPerLayerCollectivesStayPerLayerWithExperts) {
  PredictConfig c = gpt_config(16, 512, 8, {2, 1, 1}, 4, 1, "h100-sxm");
  c.gpt.seq = 512;
  c.gpt.vocab = 8000;
  c.gpt.experts = 2;
  c.gpt.expert_ffn = 8;
  c.schedule = schedule::Family::kDataParallel;
  c.zero = 3;
  const double ep1 = simulate(c).summary.breakdown.dp_collectives_wire_s;
  c.ep = 2;
  const double ep2 = simulate(c).summary.breakdown.dp_collectives_wire_s;
  ASSERT_GT(ep1, 0);
  EXPECT_NEAR(ep2 / ep1, 1.0, 0.05) << ep1 << " s against " << ep2 << " s";
}

TEST(PredictSimulate, RunsAGivenScheduleWithTheConfigsCosts) {
  PredictConfig c = small_gpt();
  c.symmetry = Symmetry::kOff;
  const Simulation generated = simulate(c);
  // The same schedule handed back gives the same step; a shuffled one (GPipe order) another.
  SimulateOptions o;
  o.schedule = &generated.schedule;
  EXPECT_EQ(simulate(c, o).summary.step_time_s, generated.summary.step_time_s);
  PredictConfig gp = c;
  gp.schedule = schedule::Family::kGpipe;
  const Simulation gpipe = simulate(gp);
  o.schedule = &gpipe.schedule;
  EXPECT_EQ(simulate(c, o).summary.peak_memory_bytes, gpipe.summary.peak_memory_bytes);
  PredictConfig other = c;
  other.mesh = {1, 2, 2};
  EXPECT_THROW(simulate(other, o), std::invalid_argument);
}

TEST(PredictSimulate, AGivenScheduleTheValidatorRejectsGetsNoStepTime) {
  PredictConfig c;
  c.model = ModelKind::kMlp;
  c.mlp_layers = 2;
  c.mlp_hidden = 64;
  c.mesh = {1, 2, 1};
  c.global_batch = 1;
  c.gpu = "a100-80gb";
  // Rank 1 runs its backward before its forward: the engine alone would time it.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 0F0 0SEND_F0 0RECV_B0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1B0 1F0 1SEND_B0 1STEP\n");
  SimulateOptions o;
  o.schedule = &s;
  try {
    simulate(c, o);
    FAIL() << "expected the schedule to be rejected";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 (dp0 pp1 tp0) step 1 (1B0): missing input"),
              std::string::npos)
        << e.what();
  }
}

TEST(PredictSimulate, ACalibrationOfAnotherDeviceIsRefused) {
  const PredictConfig c = small_gpt();  // h100-sxm
  cost::Calibration cal;
  cal.hardware = "cpu-local";
  SimulateOptions o;
  o.calibration = &cal;
  try {
    simulate(c, o);
    FAIL() << "a cpu-local calibration was applied to h100-sxm";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fitted on 'cpu-local'"), std::string::npos) << e.what();
  }
  cal.hardware = "h100-sxm";
  EXPECT_GT(simulate(c, o).summary.step_time_s, 0);
}

TEST(PredictSimulate, AStepFollowsTheCalibratedOptimizerRate) {
  PredictConfig c;
  c.model = ModelKind::kMlp;
  c.mlp_layers = 2;
  c.mlp_hidden = 256;
  c.mesh = {1, 1, 1};
  c.schedule = schedule::Family::kDataParallel;
  c.gpu = "cpu-local";
  c.precision = cost::Precision::kFp32;
  c.optimizer = Optimizer::kSgd;
  auto step_ns = [&](double flops_per_s) {
    cost::Calibration cal;
    cal.hardware = "cpu-local";
    cal.phases[static_cast<size_t>(traces::Phase::kOptimizer)].flops_per_s = flops_per_s;
    SimulateOptions o;
    o.calibration = flops_per_s > 0 ? &cal : nullptr;
    const Simulation sim = simulate(c, o);
    for (const traces::Span& sp : sim.timeline.spans)
      if (sp.phase == traces::Phase::kOptimizer) return sp.end_ns - sp.begin_ns;
    return int64_t{-1};
  };
  // 2 layers of 256 x 1024 and 1024 x 256 weights plus biases: 2 FLOPs per parameter at 1 GFLOP/s.
  const double params = 2 * (256.0 * 1024 + 1024 + 1024.0 * 256 + 256);
  EXPECT_NEAR(step_ns(1e9), 2 * params, 1);
  EXPECT_NEAR(step_ns(2e9), params, 1);
  EXPECT_GT(step_ns(0), 0);  // uncalibrated: the catalog's memory-bound pass
}

TEST(PredictSimulate, ShapesTheModelCannotTakeAreReported) {
  PredictConfig c = small_gpt();
  c.mesh = {1, 1, 32};
  EXPECT_THROW(simulate(c), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::predict
