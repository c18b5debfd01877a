// The config's framework profile and options on what a GPU holds and reduces: ZeRO as each stack
// runs it beside pipelining, the gradients' and the optimizer states' bytes, the data-parallel
// group with context parallelism, the optimizer step over the shard.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/cost/compute_model.h"
#include "sim/cost/hardware.h"
#include "sim/predict/breakdown.h"
#include "sim/predict/config.h"
#include "sim/predict/fit_alternatives.h"
#include "sim/predict/simulate.h"
#include "sim/predict/workload_costs.h"
#include "tests/sim/config_error.h"
#include "tests/sim/predict_profile_fixture.h"

namespace meshscope::predict {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::summary_of;
using testing::tiny_gpt;
using testing::write_profile;

// DeepSpeed's pipeline engine refuses ZeRO-2 and 3 (deepspeed-megatron's pipelined_zero 1): a
// pipelined config of that stack asking for more is refused naming the key, an unpipelined one is
// not, and neither what would make a config fit nor a search offers what the stack cannot run.
TEST(PredictFrameworkConfig, AStackThatStopsAtZeroOneBesidePipeliningIsNotAskedForMore) {
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["framework"] = "deepspeed-megatron";
  j["options"]["zero"] = 2;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.zero': framework 'deepspeed-megatron' runs ZeRO up to stage 1 "
            "beside pipeline parallelism (mesh.pp 2; its profile's \"pipelined_zero\"), not 2");
  j["options"]["zero"] = 1;
  EXPECT_EQ(error_of(j), "");
  j["mesh"] = {{"dp", 8}};
  j["options"]["zero"] = 3;
  EXPECT_EQ(error_of(j), "");
  j["framework"] = "megatron-core-2024";  // no limit
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  EXPECT_EQ(error_of(j), "");
  // Built in code, as a search or an alternative builds it, the same config is refused too.
  j["framework"] = "deepspeed-megatron";
  j["options"]["zero"] = 1;
  PredictConfig c = parse_config(j, "cfg.json");
  c.zero = 3;
  EXPECT_THROW(simulate(c, {.build_timeline = false}), std::invalid_argument);
  // A pipelined config too large for its GPU: the ways to fit it stop at ZeRO-1.
  j = tiny_gpt();
  j["model"]["layers"] = 24;
  j["model"]["hidden"] = 8192;
  j["model"]["heads"] = 64;
  j["model"]["seq"] = 8192;
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["batch"] = {{"global", 32}, {"micro", 4}};
  j["framework"] = "deepspeed-megatron";
  c = parse_config(j, "cfg.json");
  ASSERT_FALSE(simulate(c, {.build_timeline = false}).summary.fits);
  const FitAlternatives f = fit_alternatives(c, {});
  ASSERT_GT(f.tried, 0);
  std::vector<const FitAlternative*> offered = {&f.least_memory};
  for (const FitAlternative& a : f.fitting) offered.push_back(&a);
  for (const FitAlternative* a : offered) {
    for (const auto& [key, value] : a->changes) {
      if (key == "options.zero") {
        EXPECT_LE(std::stoi(value), 1) << value;
      }
    }
  }
}

// Two profiles alike but for pipelined_sharding (docs/ACCURACY.md item 44): beside pipeline
// parallelism, "per-step" (torch's pipelining driving FSDP2, torchtitan) gathers each stage's
// parameters once before its first forward and reduce-scatters once after its last backward,
// holding both whole (the gradients at the fp32 reduction's 4 bytes); "per-microbatch" gathers
// before every forward and backward and reduces after every backward, holding both sharded.
// Without pipelining the two are the same run.
// A stack runs the ZeRO stages its profile lists (zero_stages), and torchtitan's DDP only when
// nothing else splits the model (replicate_alone): each refused naming options.zero.
TEST(PredictFrameworkConfig, AStackIsAskedOnlyForTheZeroStagesItRuns) {
  json j = tiny_gpt();
  j["framework"] = "megatron-2022";
  j["options"]["zero"] = 1;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.zero': framework 'megatron-2022' runs ZeRO stage 0 (its "
            "profile's \"zero_stages\"), not 1");
  j["framework"] = "llm-foundry";
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.zero': framework 'llm-foundry' runs ZeRO stages 0, 2 and 3 "
            "(its profile's \"zero_stages\"), not 1");
  j["options"]["zero"] = 2;
  EXPECT_EQ(error_of(j), "");
  j["framework"] = "torchtitan";
  j["options"]["zero"] = 0;
  EXPECT_EQ(error_of(j), "");  // DDP over 8 GPUs
  j["mesh"] = {{"dp", 4}, {"tp", 2}};
  EXPECT_NE(error_of(j).find("key 'options.zero': framework 'torchtitan' replicates without "
                             "sharding (options.zero 0) only when nothing else splits the model"),
            std::string::npos)
      << error_of(j);
  j["options"]["zero"] = 3;
  EXPECT_EQ(error_of(j), "");
  j["mesh"] = {{"dp", 1}, {"tp", 8}};  // no data parallelism, nothing replicated
  j["options"]["zero"] = 0;
  EXPECT_EQ(error_of(j), "");
}

TEST(PredictFrameworkConfig, FsdpUnderTorchPipeliningGathersAndReducesOnceAStep) {
  struct Count {
    int gathers = 0, reduces = 0;
  };
  auto dp_collectives = [](const schedule::Schedule& s, int rank, int stage) {
    Count n;
    for (const schedule::Action& a : s.ranks.at(rank)) {
      if (a.group != mesh::GroupKind::kDp || a.stage != stage) continue;
      n.gathers += a.kind == schedule::ActionKind::kAllGather;
      n.reduces += a.kind == schedule::ActionKind::kReduceScatter;
    }
    return n;
  };
  json j = tiny_gpt();  // 4 layers
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  j["batch"] = {{"global", 32}, {"micro", 1}};  // 8 microbatches a replica
  j["options"]["zero"] = 3;
  const std::string more = R"(, "grad_reduce_bytes": 4, "grad_reduce": "exposed")";
  for (const std::string schedule : {"1f1b", "interleaved"}) {
    j["schedule"] = schedule;
    j["framework"] = write_profile("sharded-per-microbatch", more);
    const PredictConfig pc = parse_config(j, "cfg.json");
    const Simulation per_mb = simulate(pc, {.build_timeline = false});
    j["framework"] =
        write_profile("sharded-per-step", more + R"(, "pipelined_sharding": "per-step")");
    const Simulation per_step = simulate(parse_config(j, "cfg.json"), {.build_timeline = false});
    const int m = per_mb.summary.microbatches;
    ASSERT_EQ(m, 8);
    const int v = schedule == "1f1b" ? 1 : 2;
    for (int rank = 0; rank < 2; ++rank) {
      for (int k = 0; k < v; ++k) {
        const int stage = rank + 2 * k;  // interleaved: stage s on pp rank s mod pp
        const Count a = dp_collectives(per_mb.schedule, rank, stage);
        const Count b = dp_collectives(per_step.schedule, rank, stage);
        EXPECT_EQ(a.gathers, 2 * m) << schedule << " stage " << stage;
        EXPECT_EQ(a.reduces, m) << schedule << " stage " << stage;
        EXPECT_EQ(b.gathers, 1) << schedule << " stage " << stage;
        EXPECT_EQ(b.reduces, 1) << schedule << " stage " << stage;
      }
    }
    // Fewer collectives waited for; the states held whole, the gradients in fp32.
    EXPECT_LT(per_step.summary.step_time_s, per_mb.summary.step_time_s) << schedule;
    const DeviceMemory& sharded = per_mb.summary.memory[0];
    const DeviceMemory& whole = per_step.summary.memory[0];
    EXPECT_NEAR(static_cast<double>(whole.parameters_bytes), 4.0 * sharded.parameters_bytes, 4);
    EXPECT_NEAR(static_cast<double>(whole.gradients_bytes), 2 * 4.0 * sharded.gradients_bytes, 8);
    EXPECT_EQ(whole.optimizer_bytes, sharded.optimizer_bytes);
  }
  // Without pipelining both gather and reduce around every microbatch: the same prediction.
  j["schedule"] = "1f1b";
  j["mesh"] = {{"dp", 8}};
  j["framework"] = write_profile("sharded-per-microbatch", more);
  const Summary a = summary_of(j);
  j["framework"] =
      write_profile("sharded-per-step", more + R"(, "pipelined_sharding": "per-step")");
  const Summary b = summary_of(j);
  EXPECT_DOUBLE_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
  // The key's refusal names it.
  j["framework"] = write_profile("sharded-wrong", R"(, "pipelined_sharding": "per-layer")");
  EXPECT_NE(error_of(j).find("key 'pipelined_sharding': must be \"per-step\" or"),
            std::string::npos)
      << error_of(j);
}

TEST(PredictFrameworkConfig, FsdpHoldsItsRootUnitAndLastBlocksWholeWhileTheLossRuns) {
  // Under ZeRO-3 gathered each microbatch, a profile's held_unsharded puts, on the rank that
  // computes the loss, its stages' parameters outside their layers (the root unit) and its last
  // blocks whole in bf16 beside the shards (item 48): memory only, the step time does not move.
  json j = tiny_gpt();  // 4 layers of 1024, vocabulary 51,200, seq 2,048, tied, learned positions
  j["options"]["zero"] = 3;
  auto parameters = [&](int layers) {
    json k = j;
    k["model"]["layers"] = layers;
    return workload_costs(parse_config(k, "cfg.json")).dense_parameters[0];
  };
  const int64_t layer = parameters(5) - parameters(4);
  const int64_t root = parameters(4) - 4 * layer;
  ASSERT_EQ(root, 51200 * 1024 + 2048 * 1024 + 2 * 1024);  // embedding (tied), positions, norm
  j["framework"] = write_profile("holds-nothing", "");
  const Summary none = summary_of(j);
  ASSERT_EQ(none.memory.size(), 1u);
  EXPECT_EQ(none.memory[0].unsharded_bytes, 0);
  auto held = [&](const char* root_kept, int last) {
    // A profile is read once per path: each variant gets a name of its own.
    j["framework"] = write_profile(std::string("holds-") + root_kept + "-" + std::to_string(last),
                                   std::string(R"(, "held_unsharded": {"root": )") + root_kept +
                                       R"(, "last_layers": )" + std::to_string(last) + "}");
    return summary_of(j);
  };
  const Summary fsdp1 = held("true", 0);
  EXPECT_EQ(fsdp1.memory[0].unsharded_bytes, 2 * root);
  EXPECT_EQ(fsdp1.peak_memory_bytes - none.peak_memory_bytes, 2 * root);
  EXPECT_DOUBLE_EQ(fsdp1.step_time_s, none.step_time_s);
  EXPECT_EQ(held("true", 1).memory[0].unsharded_bytes, 2 * (root + layer));  // torchtitan's
  EXPECT_EQ(held("false", 2).memory[0].unsharded_bytes, 2 * 2 * layer);
  EXPECT_EQ(held("false", 9).memory[0].unsharded_bytes, 2 * 4 * layer);  // no more than it has
  // fp32 compute keeps them at 4 bytes.
  j["options"]["precision"] = "fp32";
  EXPECT_EQ(held("true", 0).memory[0].unsharded_bytes, 4 * root);
  j["options"].erase("precision");
  // Nothing is gathered whole where the parameters are not sharded.
  j["options"]["zero"] = 1;
  EXPECT_EQ(held("true", 1).memory[0].unsharded_bytes, 0);
  // Pipelined, each microbatch: only the last rank computes the loss, and its root is the output
  // layer (untied across stages) and the final norm; gathered once a step, nothing beyond.
  j["options"]["zero"] = 3;
  j["mesh"] = {{"dp", 4}, {"pp", 2}};
  const Summary piped = held("true", 1);
  ASSERT_EQ(piped.memory.size(), 2u);
  EXPECT_EQ(piped.memory[0].unsharded_bytes, 0);
  EXPECT_EQ(piped.memory[1].unsharded_bytes, 2 * (51200 * 1024 + 2 * 1024 + layer));
  j["framework"] = write_profile(
      "holds-per-step",
      R"(, "held_unsharded": {"root": true, "last_layers": 1}, "pipelined_sharding": "per-step")");
  const Summary once = summary_of(j);
  EXPECT_EQ(once.memory[0].unsharded_bytes, 0);
  EXPECT_EQ(once.memory[1].unsharded_bytes, 0);
}

TEST(PredictFrameworkConfig, WhereTheLossIsSmallFsdpPeaksWhenTheLastBlocksGradientsAreReduced) {
  // A small vocabulary beside wide blocks: when the last block's gradients are reduced, FSDP holds
  // the root, the output layer's gradient, the block gathered ahead and the last block's bf16
  // gradients with their fp32 reduce copy, while the head's and that block's activations are
  // freed; that moment is the peak (item 49), and the step time does not move.
  json j = tiny_gpt();
  j["model"] = {{"kind", "gpt"}, {"layers", 4},   {"hidden", 2048},          {"heads", 16},
                {"seq", 512},    {"vocab", 1024}, {"tied_embeddings", false}};
  j["options"]["zero"] = 3;
  const PredictConfig pc = parse_config(j, "cfg.json");
  const WorkloadCosts w = workload_costs(pc);
  const model::StageCost& head = w.stages.back();
  ASSERT_EQ(head.head_parameters, 1024 * 2048);
  ASSERT_GT(head.last_layer_activation_bytes, 0);
  const int64_t block = w.layer_parameters;
  const int64_t root = w.dense_parameters[0] - 4 * block;
  j["framework"] = write_profile("reduce-fp32-holds-nothing", R"(, "grad_reduce_bytes": 4)");
  const Summary none = summary_of(j);
  j["framework"] = write_profile(
      "reduce-fp32-holds-ahead",
      R"(, "grad_reduce_bytes": 4, "held_unsharded": {"root": true, "last_layers": 1, "prefetch_layers": 1})");
  const Summary fsdp = summary_of(j);
  ASSERT_EQ(fsdp.memory.size(), 1u);
  const DeviceMemory& m = fsdp.memory[0];
  EXPECT_TRUE(m.peak_at_first_reduce);
  EXPECT_EQ(m.working_bytes, 0);
  EXPECT_EQ(m.activations_bytes, none.memory[0].activations_bytes - head.head_activation_bytes -
                                     head.last_layer_activation_bytes);
  EXPECT_EQ(m.unsharded_bytes, 2 * (root + 1024 * 2048 + block + block) + 4 * block);
  EXPECT_EQ(m.parameters_bytes + m.gradients_bytes + m.optimizer_bytes,
            none.memory[0].parameters_bytes + none.memory[0].gradients_bytes +
                none.memory[0].optimizer_bytes);
  EXPECT_EQ(fsdp.peak_memory_bytes, m.total());
  EXPECT_DOUBLE_EQ(fsdp.step_time_s, none.step_time_s);
  const json mem = to_json(fsdp)["memory_per_stage"][0];
  EXPECT_EQ(mem["peak_at"], "first_gradient_reduce");
  EXPECT_EQ(mem["total_bytes"], m.total());
  // Reduced in the compute type, the gradients are not copied.
  j["framework"] = write_profile(
      "reduce-bf16-holds-ahead",
      R"(, "grad_reduce_bytes": 2, "held_unsharded": {"root": true, "last_layers": 1, "prefetch_layers": 1})");
  const Summary bf16 = summary_of(j);
  EXPECT_TRUE(bf16.memory[0].peak_at_first_reduce);
  EXPECT_EQ(m.unsharded_bytes - bf16.memory[0].unsharded_bytes, 4 * block);
  // A vocabulary of 51,200 over 2,048 tokens: the loss's working set is the higher moment.
  j["model"]["vocab"] = 51200;
  j["model"]["seq"] = 2048;
  j["framework"] = write_profile(
      "reduce-fp32-holds-ahead-big-vocab",
      R"(, "grad_reduce_bytes": 4, "held_unsharded": {"root": true, "last_layers": 1, "prefetch_layers": 1})");
  const Summary loss = summary_of(j);
  EXPECT_FALSE(loss.memory[0].peak_at_first_reduce);
  EXPECT_GT(loss.memory[0].working_bytes, 0);
  EXPECT_EQ(to_json(loss)["memory_per_stage"][0]["peak_at"], "loss");
}

TEST(PredictFrameworkConfig, AProfilesGradientBytesAreHeldAndShardedLikeTheGradients) {
  // A profile that keeps fp32 gradients under bf16 holds 4 bytes a parameter where ZeRO's
  // accounting holds 2, sharded from ZeRO-2 on like any gradient; the step time does not move,
  // and an fp16 run of the same profile keeps its element size.
  json j = tiny_gpt();
  j["framework"] = write_profile("grads-as-run", "");
  const Summary plain = summary_of(j);
  j["framework"] = write_profile("fp32-main-grads", R"(, "gradient_bytes": {"bf16": 4})");
  const Summary fp32 = summary_of(j);
  ASSERT_EQ(fp32.memory.size(), 1u);
  EXPECT_EQ(fp32.memory[0].gradients_bytes, 2 * plain.memory[0].gradients_bytes);
  EXPECT_EQ(fp32.peak_memory_bytes - plain.peak_memory_bytes, plain.memory[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(fp32.step_time_s, plain.step_time_s);
  j["options"]["zero"] = 2;
  const Summary sharded = summary_of(j);
  EXPECT_NEAR(static_cast<double>(sharded.memory[0].gradients_bytes),
              fp32.memory[0].gradients_bytes / 8.0, 1.0);
  j["options"]["zero"] = 0;
  j["options"]["precision"] = "fp16";
  const Summary fp16 = summary_of(j);
  EXPECT_EQ(fp16.memory[0].gradients_bytes, plain.memory[0].gradients_bytes);
}

TEST(PredictFrameworkConfig, AGradReduceDtypeSetsWhatTheReductionsMoveAndWhereReducedWhatIsKept) {
  // options.grad_reduce_dtype over the profile's grad_reduce_bytes (docs/ACCURACY.md item 45): an
  // fp32 reduction moves twice a bf16 one's bytes, as a profile saying {"bf16": 4} does; the
  // gradients held follow it only where the profile keeps them in the reduced buffer.
  json j = tiny_gpt();
  j["framework"] = write_profile("reduce-as-run", "");
  const Summary plain = summary_of(j);
  j["options"]["grad_reduce_dtype"] = "fp32";
  const Summary fp32 = summary_of(j);
  EXPECT_GT(fp32.step_time_s, plain.step_time_s);  // the exposed all-reduce moves 4 bytes
  EXPECT_EQ(fp32.memory[0].gradients_bytes, plain.memory[0].gradients_bytes);
  j["options"].erase("grad_reduce_dtype");
  j["framework"] = write_profile("reduce-in-fp32", R"(, "grad_reduce_bytes": {"bf16": 4})");
  EXPECT_DOUBLE_EQ(summary_of(j).step_time_s, fp32.step_time_s);
  j["options"]["grad_reduce_dtype"] = "bf16";  // the run's own type over the profile's
  EXPECT_DOUBLE_EQ(summary_of(j).step_time_s, plain.step_time_s);
  // Kept in the reduced buffer: 4 bytes a parameter under fp32, 2 under bf16.
  j["framework"] = write_profile(
      "kept-as-reduced", R"(, "grad_reduce_bytes": {"bf16": 4}, "gradient_bytes": "reduced")");
  j["options"].erase("grad_reduce_dtype");
  const Summary kept = summary_of(j);
  EXPECT_EQ(kept.memory[0].gradients_bytes, 2 * plain.memory[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(kept.step_time_s, fp32.step_time_s);
  j["options"]["grad_reduce_dtype"] = "bf16";
  EXPECT_EQ(summary_of(j).memory[0].gradients_bytes, plain.memory[0].gradients_bytes);
  j["options"]["grad_reduce_dtype"] = "tf32";
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.grad_reduce_dtype': 'tf32' is not one of bf16, fp16, fp32");
}

// The trace says what the links move: an fp32 reduction's spans carry 4 bytes a parameter (they
// carried the bf16 2 while the step was priced for 4), ZeRO-2's reduce-scatters too, and its
// parameter gathers the compute precision's 2.
TEST(PredictFrameworkConfig, TheTracesReductionsCarryTheBytesTheyArePricedFor) {
  const auto dp_bytes = [](const json& j, std::string_view prefix) {
    const Simulation r = simulate(parse_config(j, "cfg.json"));
    std::set<int64_t> bytes;
    for (const traces::Span& s : r.timeline.spans)
      if (r.timeline.span_name(s).starts_with(prefix)) bytes.insert(s.bytes);
    return bytes;
  };
  json j = tiny_gpt();
  j["options"]["grad_reduce_dtype"] = "bf16";
  const std::set<int64_t> bf16 = dp_bytes(j, "ALLREDUCE(dp)");
  ASSERT_EQ(bf16.size(), 1u);
  const int64_t params = *bf16.begin() / 2;
  j["options"]["grad_reduce_dtype"] = "fp32";
  EXPECT_EQ(dp_bytes(j, "ALLREDUCE(dp)"), std::set<int64_t>{4 * params});
  j["options"]["zero"] = 2;
  EXPECT_EQ(dp_bytes(j, "REDUCESCATTER(dp)"), std::set<int64_t>{4 * params});
  EXPECT_EQ(dp_bytes(j, "ALLGATHER(dp)"), std::set<int64_t>{2 * params});
}

TEST(PredictFrameworkConfig, ContextParallelDevicesShareTheShardsAndTheReductions) {
  // With cp 2 the dp x cp devices reduce the gradients together and ZeRO shards the states over
  // all of them (docs/ACCURACY.md item 46): half the optimizer state of the dp-only sharding.
  json j = tiny_gpt();
  j["mesh"] = {{"dp", 4}, {"cp", 2}};
  j["options"]["zero"] = 1;
  const PredictConfig c = parse_config(j, "cfg.json");
  EXPECT_EQ(c.zero_shards(), 8);
  const Summary cp = summary_of(j);
  j["mesh"] = {{"dp", 4}};
  const Summary dp = summary_of(j);
  ASSERT_EQ(cp.memory.size(), 1u);
  EXPECT_NEAR(static_cast<double>(cp.memory[0].optimizer_bytes), dp.memory[0].optimizer_bytes / 2.0,
              1.0);
  EXPECT_EQ(cp.memory[0].gradients_bytes, dp.memory[0].gradients_bytes);
  // Without a second dp rank the cp devices still reduce their gradients together (no ZeRO: the
  // all-reduce the schedule writes, not ZeRO-1's gather after the step).
  j["options"].erase("zero");
  j["mesh"] = {{"dp", 1}, {"cp", 2}};
  EXPECT_GT(summary_of(j).breakdown.dp_collectives_wire_s, 0);
  j["mesh"] = {{"dp", 1}};
  EXPECT_EQ(summary_of(j).breakdown.dp_collectives_wire_s, 0);
}

TEST(PredictFrameworkConfig, AnOptimizerStateBytesIsWhatTheStatesHoldShardedAsBefore) {
  // options.optimizer_state_bytes (docs/ACCURACY.md item 47): NeMo's distributed_fused_adam keeps
  // 16-bit remainders and fp32 moments (10) or bf16 moments (4) where ZeRO's accounting holds 12;
  // memory only, sharded over dp under ZeRO-1 as before.
  json j = tiny_gpt();
  j["options"]["zero"] = 1;
  const Summary adam = summary_of(j);
  j["options"]["optimizer_state_bytes"] = 4;
  const Summary bf16 = summary_of(j);
  ASSERT_EQ(bf16.memory.size(), 1u);
  EXPECT_NEAR(static_cast<double>(bf16.memory[0].optimizer_bytes),
              adam.memory[0].optimizer_bytes / 3.0, 1.0);
  EXPECT_EQ(bf16.memory[0].gradients_bytes, adam.memory[0].gradients_bytes);
  EXPECT_DOUBLE_EQ(bf16.step_time_s, adam.step_time_s);
  // --breakdown and --json say what each state holds a parameter, and over how many devices.
  EXPECT_DOUBLE_EQ(adam.state_bytes.optimizer, 12);
  EXPECT_DOUBLE_EQ(bf16.state_bytes.optimizer, 4);
  EXPECT_EQ(bf16.optimizer_shards, 8);
  EXPECT_EQ(bf16.gradient_shards, 1);
  EXPECT_EQ(bf16.parameter_shards, 1);
  j["options"]["optimizer_state_bytes"] = 65;
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.optimizer_state_bytes': must be an integer in [0, 64] (bytes a "
            "parameter)");
  // A value of another type is told the same range (it had been [0, 2147483647]).
  j["options"]["optimizer_state_bytes"] = "x";
  EXPECT_EQ(error_of(j),
            "cfg.json: key 'options.optimizer_state_bytes': must be an integer in [0, 64] (bytes a "
            "parameter)");
  j["options"].erase("optimizer_state_bytes");
  j["options"]["zero"] = "x";
  EXPECT_EQ(error_of(j), "cfg.json: key 'options.zero': must be an integer in [0, 3]");
}

TEST(PredictFrameworkConfig, AnUnfusedOptimizerStepCostsItsBytesOnTheShardOnceAStep) {
  // Two profiles alike but for optimizer_step_bytes: the step differs by the extra bytes over the
  // parameters each GPU updates (its 1/dp shard under ZeRO >= 1), once per step, at the memory
  // rate; an SGD config is unaffected.
  const auto& profile = write_profile;
  json j = tiny_gpt();
  j["options"]["zero"] = 1;
  j["framework"] = profile("fused-adam", "");
  const PredictConfig plain = parse_config(j, "cfg.json");
  const Summary fused = simulate(plain, {.build_timeline = false}).summary;
  j["framework"] = profile("unfused-adam", R"(, "optimizer_step_bytes": 96)");
  const Summary unfused = summary_of(j);
  const WorkloadCosts w = workload_costs(plain);
  const cost::ComputeModel compute(cost::find_hardware("h100-sxm"), plain.precision);
  const double shard = static_cast<double>(w.dense_parameters[0]) / 8;
  EXPECT_NEAR(unfused.step_time_s - fused.step_time_s, compute.stream_seconds(shard * (96 - 28)),
              1e-7);
  EXPECT_GT(unfused.step_time_s, fused.step_time_s);
  j["options"]["optimizer"] = "sgd";
  const Summary sgd = summary_of(j);
  j["framework"] = profile("fused-adam", "");
  EXPECT_DOUBLE_EQ(sgd.step_time_s, summary_of(j).step_time_s);
  // Given by precision, a run pays its own precision's figure: the fp16 entry costs an fp16 run
  // its bytes and leaves a bf16 run at the fused pass.
  j["options"]["optimizer"] = "adam";
  j["framework"] = profile("adam-by-precision", R"(, "optimizer_step_bytes": {"fp16": 96})");
  EXPECT_DOUBLE_EQ(summary_of(j).step_time_s, fused.step_time_s);  // tiny_gpt runs bf16
  j["options"]["precision"] = "fp16";
  const Summary fp16_by = summary_of(j);
  j["framework"] = profile("fused-adam", "");
  const Summary fp16_fused = summary_of(j);
  EXPECT_NEAR(fp16_by.step_time_s - fp16_fused.step_time_s,
              compute.stream_seconds(shard * (96 - 28)), 1e-7);
}

}  // namespace
}  // namespace meshscope::predict
