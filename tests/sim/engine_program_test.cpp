// The compiled program: ranks that run the same actions share one copy of its ops, and what
// differs per rank (peers, link tiers, durations given per rank) still comes out per rank.
#include "sim/engine/program.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/engine/engine.h"
#include "sim/mesh/mesh.h"
#include "sim/schedule/generators.h"
#include "tests/sim/engine_test_util.h"

namespace meshscope::engine {
namespace {

using schedule::Action;
using testing::equal_stages;

schedule::Schedule one_f_one_b(int dp, int pp, int tp, int m, int64_t activation_bytes = 4096) {
  schedule::GeneratorConfig c;
  c.family = schedule::Family::kOneFOneB;
  c.mesh = {.dp = dp, .pp = pp, .tp = tp};
  c.microbatches = m;
  c.activation_bytes = {activation_bytes};
  c.gradient_bytes = {1 << 20};
  return schedule::generate(c);
}

// Finite links, so that bytes moved show in the times.
EngineInput with_links(const schedule::Schedule& s) {
  EngineInput in = equal_stages(s, 1000, 1000, 1000);
  in.links = {LinkSpec{1e9, 100}};
  return in;
}

// Every rank's ops say what its own actions say, and every SEND is paired with a RECV of the
// same direction on its peer.
void expect_program_follows_schedule(const Program& p, const schedule::Schedule& s) {
  for (int r = 0; r < p.num_ranks; ++r) {
    ASSERT_EQ(p.rank_begin[r + 1] - p.rank_begin[r], s.ranks[r].size());
    for (size_t i = 0; i < s.ranks[r].size(); ++i) {
      const Op& op = p.op(r, p.rank_begin[r] + static_cast<uint32_t>(i));
      EXPECT_EQ(op.kind, s.ranks[r][i].kind) << "rank " << r << " action " << i;
      EXPECT_EQ(op.stage, s.ranks[r][i].stage) << "rank " << r << " action " << i;
    }
    for (uint32_t k = p.send_begin[r]; k < p.send_begin[r + 1]; ++k) {
      const Send& send = p.sends[k];
      const int peer = static_cast<int>(send.peer);
      ASSERT_EQ(p.rank_of_op(send.recv), peer);
      const Action& a = s.ranks[r][send.op - p.rank_begin[r]];
      const Action& b = s.ranks[peer][send.recv - p.rank_begin[peer]];
      EXPECT_TRUE(schedule::is_send(a.kind) && schedule::is_recv(b.kind));
      EXPECT_EQ(a.microbatch, b.microbatch);
      EXPECT_EQ(a.kind == schedule::ActionKind::kSendForward,
                b.kind == schedule::ActionKind::kRecvForward);
    }
  }
}

TEST(EngineProgram, ReplicasShareOneProgramPerPpRank) {
  const auto s = one_f_one_b(4, 4, 2, 8);
  const EngineInput in = with_links(s);
  const Program p = compile(in);
  EXPECT_EQ(p.programs, 4);  // dp 4 x tp 2 ranks run each pp rank's program
  size_t distinct = 0;
  for (int pp = 0; pp < 4; ++pp) distinct += s.ranks[static_cast<size_t>(pp) * 2].size();
  EXPECT_EQ(p.code.size(), distinct);
  expect_program_follows_schedule(p, s);
}

TEST(EngineProgram, DurationsGivenPerRankGiveEachRankItsOwn) {
  const auto s = one_f_one_b(2, 2, 1, 4);
  EngineInput in = with_links(s);
  in.compute_action_ns = [](int rank, const Action& a) {
    return int64_t{1000 + 10 * rank + a.stage};
  };
  const Program p = compile(in);
  EXPECT_EQ(p.programs, 4);
  for (int r = 0; r < 4; ++r) {
    for (size_t i = 0; i < s.ranks[r].size(); ++i) {
      if (!schedule::is_compute(s.ranks[r][i].kind)) continue;
      EXPECT_EQ(p.op(r, p.rank_begin[r] + static_cast<uint32_t>(i)).value,
                1000 + 10 * r + s.ranks[r][i].stage);
    }
  }
  expect_program_follows_schedule(p, s);
}

// dp replica 1 moves twice the bytes: it gets programs of its own, and its transfers take as long
// as those of a mesh where every replica moves that much, while replica 0's stay as they were.
TEST(EngineProgram, AReplicaThatDiffersRunsItsOwnProgram) {
  const auto small = one_f_one_b(2, 2, 1, 4, 4096);
  const auto large = one_f_one_b(2, 2, 1, 4, 8192);
  schedule::Schedule mixed = small;
  const mesh::Mesh mesh(mixed.mesh);
  for (int r = 0; r < mesh.size(); ++r)
    if (mesh.coord_of(r).dp == 1) mixed.ranks[r] = large.ranks[r];
  const EngineInput in = with_links(mixed);
  const Program p = compile(in);
  EXPECT_EQ(p.programs, 4);
  expect_program_follows_schedule(p, mixed);
  const EngineResult m = simulate(in);
  const EngineResult s = simulate(with_links(small));
  const EngineResult l = simulate(with_links(large));
  for (int r = 0; r < mesh.size(); ++r) {
    const EngineResult& alone = mesh.coord_of(r).dp == 1 ? l : s;
    EXPECT_EQ(m.ranks[r].communication_ns, alone.ranks[r].communication_ns) << "rank " << r;
    EXPECT_EQ(m.ranks[r].compute_ns, alone.ranks[r].compute_ns) << "rank " << r;
  }
  EXPECT_GT(l.ranks[0].communication_ns, s.ranks[0].communication_ns);
}

// Peers written out (as an imported schedule has them) are compared one replica over: the
// replicas still share, and the run is the one without them.
TEST(EngineProgram, PeersGivenOneReplicaOverStillShare) {
  const auto implicit = one_f_one_b(4, 2, 2, 4);
  schedule::Schedule explicit_peers = implicit;
  const mesh::Mesh mesh(implicit.mesh);
  for (int r = 0; r < mesh.size(); ++r)
    for (Action& a : explicit_peers.ranks[r])
      if (schedule::is_p2p(a.kind)) a.peer = a.stage == 0 ? r + 2 : r - 2;
  const Program p = compile(with_links(explicit_peers));
  EXPECT_EQ(p.programs, 2);
  expect_program_follows_schedule(p, explicit_peers);
  const EngineResult a = simulate(with_links(implicit));
  const EngineResult b = simulate(with_links(explicit_peers));
  EXPECT_EQ(a.step_time_ns, b.step_time_ns);
  for (int r = 0; r < mesh.size(); ++r) {
    EXPECT_EQ(a.ranks[r].communication_ns, b.ranks[r].communication_ns);
    EXPECT_EQ(a.ranks[r].end_ns, b.ranks[r].end_ns);
  }
}

// Two replicas whose SENDs name the same rank are not one program one replica over: replica 1's
// forward sends go to rank 1, whose RECVs replica 0's sends already take. Compiled as its own
// program, replica 1's SEND is refused as the schedule says it, not paired with rank 3.
TEST(EngineProgram, SendsToTheSameRankFromTwoReplicasAreRefused) {
  schedule::Schedule s = one_f_one_b(2, 2, 1, 4);  // ranks 0, 1: replica 0; 2, 3: replica 1
  for (const int r : {0, 2})
    for (Action& a : s.ranks[r])
      if (a.kind == schedule::ActionKind::kSendForward) a.peer = 1;
  try {
    compile(with_links(s));
    FAIL() << "compiled a schedule with two SENDs for one RECV";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 action"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("its RECV on rank 1 is already matched"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace meshscope::engine
