// The engine runs a schedule under the validator's semantics (validator.h): what the validator
// accepts simulates, what it rejects as a deadlock the engine reports as one.
#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>

#include "sim/engine/engine.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/validator.h"

namespace meshscope::engine {
namespace {

using schedule::Family;

EngineInput costs_for(const schedule::Schedule& s) {
  EngineInput in;
  in.schedule = &s;
  in.stages.assign(s.num_stages, StageTiming{100, 200, 120, 80, 10});
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{30}; };
  in.links = {LinkSpec{1e9, 5}};
  return in;
}

// "" when the engine finishes, else its error message.
std::string engine_verdict(const schedule::Schedule& s) {
  try {
    simulate(costs_for(s));
    return "";
  } catch (const SimulationError& e) {
    return e.what();
  }
}

bool is_deadlock(const std::string& message) {
  return message.find("deadlock") != std::string::npos;
}

// The validator rejects `s` as a deadlock and the engine reports one, naming each of `waits`.
void expect_deadlock(const schedule::Schedule& s, std::initializer_list<std::string> waits) {
  const auto v = schedule::validate(s);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error->kind, schedule::ErrorKind::kDeadlock) << v.error->message;
  const std::string e = engine_verdict(s);
  EXPECT_TRUE(is_deadlock(e)) << e;
  for (const std::string& wait : waits) EXPECT_NE(e.find(wait), std::string::npos) << e;
}

TEST(EngineSemantics, RecvWaitsForItsSendLikeTheValidator) {
  // Rank 0 receives the gradient before sending the activation it depends on: both ranks wait at
  // a RECV. Receives posted early would let the data flow; the executor's do not.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 0F0 0RECV_B0 0SEND_F0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1STEP\n");
  expect_deadlock(s, {"rank 0 at action 1 '0RECV_B0' (waiting for rank 1 to send it)",
                      "rank 1 at action 0 '1RECV_F0' (waiting for rank 0 to send it)"});
}

TEST(EngineSemantics, CollectiveWaitsForEveryMemberLikeTheValidator) {
  // Rank 0 all-gathers over dp before its forward; its dp partner (rank 2) reaches the all-gather
  // only after a backward that needs, through ranks 3 and 1, rank 0's forward: a cycle.
  const auto s = schedule::load(
      "mesh dp=2 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 0ALLGATHER(dp):8 0F0 0SEND_F0 0RECV_B0 0B0 0ALLREDUCE(dp):8 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1ALLGATHER(dp):8 1ALLREDUCE(dp):8 1STEP\n"
      "rank 2: 0F0 0SEND_F0 0RECV_B0 0B0 0ALLGATHER(dp):8 0ALLREDUCE(dp):8 0STEP\n"
      "rank 3: 1ALLGATHER(dp):8 1RECV_F0 1F0 1B0 1SEND_B0 1ALLREDUCE(dp):8 1STEP\n");
  expect_deadlock(
      s,
      {"rank 0 at action 0 '0ALLGATHER(dp):8' (waiting for rank 2 of its dp group to reach it)"});
}

TEST(EngineSemantics, TpRanksMeetAtEachComputeLikeTheValidator) {
  // Same compute order on both tp ranks of each stage, receives placed differently: rank 0 waits
  // at 0F1 for its tp partner rank 1, which waits for rank 3's gradient; rank 3 waits at 1B0 for
  // its partner rank 2, which waits for the activation rank 0 sends after 0F1.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=2\nmicrobatches 2\n"
      "rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1 0STEP\n"
      "rank 1: 0F0 0SEND_F0 0RECV_B0 0F1 0SEND_F1 0B0 0RECV_B1 0B1 0STEP\n"
      "rank 2: 1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 1SEND_B1 1STEP\n"
      "rank 3: 1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1SEND_B1 1STEP\n");
  expect_deadlock(
      s, {"rank 0 at action 2 '0F1' (waiting for its tp group to reach the same compute)"});
  // Moving rank 1's receive after its 0F1 (as rank 0 has it) resolves the cycle.
  const auto fixed = schedule::load(
      "mesh dp=1 pp=2 tp=2\nmicrobatches 2\n"
      "rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1 0STEP\n"
      "rank 1: 0F0 0SEND_F0 0F1 0RECV_B0 0SEND_F1 0B0 0RECV_B1 0B1 0STEP\n"
      "rank 2: 1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 1SEND_B1 1STEP\n"
      "rank 3: 1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1SEND_B1 1STEP\n");
  ASSERT_TRUE(schedule::validate(fixed).ok()) << schedule::validate(fixed).report(fixed);
  EXPECT_EQ(engine_verdict(fixed), "");
}

TEST(EngineSemantics, UnpairedTransfersNameTheFirstSendInRankOrder) {
  const std::string head = "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n";
  auto verdict = [&](const std::string& ranks) {
    return engine_verdict(schedule::load(head + ranks));
  };
  auto has = [](const std::string& e, const std::string& part) {
    return e.find(part) != std::string::npos;
  };
  // A SEND whose RECV is missing: found once every rank is read.
  std::string e = verdict(
      "rank 0: 0F0 0SEND_F0 0B0 0STEP\n"
      "rank 1: 1F0 1B0 1STEP\n");
  EXPECT_TRUE(has(e, "rank 0 action 1") && has(e, "rank 1 has no matching RECV")) << e;
  // A RECV no SEND matches.
  e = verdict(
      "rank 0: 0F0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1STEP\n");
  EXPECT_TRUE(has(e, "rank 1 action 0") && has(e, "no rank sends it")) << e;
  // Two SENDs for one RECV: the second is named.
  e = verdict(
      "rank 0: 0F0 0SEND_F0 0SEND_F0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1STEP\n");
  EXPECT_TRUE(has(e, "rank 0 action 2") && has(e, "is already matched to another SEND")) << e;
  // Sizes that disagree.
  e = verdict(
      "rank 0: 0F0 0SEND_F0@1:4096 0B0 0STEP\n"
      "rank 1: 1RECV_F0@0:8192 1F0 1B0 1STEP\n");
  EXPECT_TRUE(has(e, "sends 4096 bytes, its RECV expects 8192")) << e;
  // Two errors: rank 0's SEND (found only at the end) comes before rank 1's (found at once).
  e = verdict(
      "rank 0: 0F0 0SEND_F0 0RECV_B0@1:64 0B0 0STEP\n"
      "rank 1: 1F0 1B0 1SEND_B0@0:32 1STEP\n");
  EXPECT_TRUE(has(e, "rank 0 action 1") && has(e, "rank 1 has no matching RECV")) << e;
  // A SEND beyond the last stage, and one to a rank the mesh does not have.
  e = verdict(
      "rank 0: 0F0 0SEND_F0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1SEND_F0 1B0 1STEP\n");
  EXPECT_TRUE(has(e, "rank 1 action 2") && has(e, "sends past the last stage")) << e;
  e = verdict(
      "rank 0: 0F0 0SEND_F0@7 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1STEP\n");
  EXPECT_TRUE(has(e, "rank 0 action 1") && has(e, "no rank holds the next stage")) << e;
  // A tier_of that names no link: the caller's mistake, not the schedule's.
  const auto ok = schedule::load(head +
                                 "rank 0: 0F0 0SEND_F0 0RECV_B0 0B0 0STEP\n"
                                 "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1STEP\n");
  EngineInput in = costs_for(ok);
  in.tier_of = [](int, int) { return 3; };
  try {
    simulate(in);
    FAIL() << "simulated over a link tier that does not exist";
  } catch (const std::invalid_argument& err) {
    EXPECT_TRUE(has(err.what(), "tier_of gave a tier outside links")) << err.what();
  }
}

TEST(EngineSemantics, EarlyReceivesAndLateSendsStillRun) {
  // Valid but unlike the generators: rank 1 posts both receives first, rank 0 sends both
  // activations only after both forwards.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 2\n"
      "rank 0: 0F0 0F1 0SEND_F0 0SEND_F1 0RECV_B0 0RECV_B1 0B0 0B1 0STEP\n"
      "rank 1: 1RECV_F0 1RECV_F1 1F0 1F1 1B0 1SEND_B0 1B1 1SEND_B1 1STEP\n");
  ASSERT_TRUE(schedule::validate(s).ok());
  EngineInput in = costs_for(s);
  in.links = {LinkSpec{1e30, 0}};
  // Rank 0: F0 F1 until 200, then sends both. Rank 1: F0 F1 B0 from 200 to 600, sends B0's
  // gradient, B1 until 800, sends it. Rank 0's B0 waits for both receives issued before it
  // (engine.h): B0 800-1000, B1 1000-1200, STEP until 1210.
  EXPECT_EQ(simulate(in).step_time_ns, 1210);
}

// Moves one action of one rank elsewhere in its program.
schedule::Schedule mutate(const schedule::Schedule& s, std::mt19937& rng) {
  schedule::Schedule out = s;
  std::uniform_int_distribution<int> pick_rank(0, static_cast<int>(out.ranks.size()) - 1);
  auto& program = out.ranks[pick_rank(rng)];
  if (program.size() < 2) return out;
  std::uniform_int_distribution<size_t> pick(0, program.size() - 1);
  const size_t from = pick(rng), to = pick(rng);
  const schedule::Action a = program[from];
  program.erase(program.begin() + static_cast<std::ptrdiff_t>(from));
  program.insert(program.begin() + static_cast<std::ptrdiff_t>(to), a);
  return out;
}

TEST(EngineSemantics, AgreesWithTheValidatorOnMutatedSchedules) {
  struct Case {
    Family family;
    mesh::MeshShape mesh;
    int m, v;
  };
  const Case cases[] = {
      {Family::kOneFOneB, {1, 4, 1}, 4, 1},       {Family::kGpipe, {2, 2, 1}, 3, 1},
      {Family::kInterleaved, {1, 2, 1}, 4, 2},    {Family::kZbH1, {1, 3, 1}, 3, 1},
      {Family::kOneFOneB, {2, 2, 2}, 2, 1},       {Family::kDataParallel, {3, 1, 1}, 2, 1},
      {Family::kTensorParallel, {1, 1, 2}, 2, 1},
  };
  std::mt19937 rng(20240607);
  int valid = 0, deadlocks = 0;
  for (const Case& c : cases) {
    schedule::GeneratorConfig g;
    g.family = c.family;
    g.mesh = c.mesh;
    g.microbatches = c.m;
    g.virtual_stages = c.v;
    g.activation_bytes = {4096};
    g.gradient_bytes = {1 << 16};
    const schedule::Schedule base = schedule::generate(g);
    for (int i = 0; i < 300; ++i) {
      schedule::Schedule s = mutate(base, rng);
      if (i % 3 == 0) s = mutate(s, rng);
      const auto v = schedule::validate(s);
      const std::string e = engine_verdict(s);
      const std::string text = schedule::dump(s);
      if (v.ok()) {
        ++valid;
        EXPECT_EQ(e, "") << "the validator accepts, the engine fails:\n" << text;
      } else if (v.error->kind == schedule::ErrorKind::kDeadlock) {
        ++deadlocks;
        EXPECT_TRUE(is_deadlock(e))
            << "the validator finds a deadlock, the engine says '" << e << "':\n"
            << v.error->message << "\n"
            << text;
      }
      if (is_deadlock(e)) {
        EXPECT_FALSE(v.ok()) << "the engine deadlocks on a valid schedule: " << e << "\n" << text;
      }
    }
  }
  // The mutations must exercise both sides, or the test proves nothing.
  EXPECT_GT(valid, 50);
  EXPECT_GT(deadlocks, 50);
}

}  // namespace
}  // namespace meshscope::engine
