// The validator: hand-written schedules with one defect each are rejected with the right kind, a
// message naming rank and action, and the grid with the failing step marked.
#include "sim/schedule/validator.h"

#include <gtest/gtest.h>

#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::schedule {
namespace {

// pp=2, m=1: the smallest pipeline, correct.
constexpr std::string_view kPipeHeader = "mesh pp=2\nmicrobatches 1\n";
constexpr std::string_view kRank0 = "rank 0: 0F0 0SEND_F0@1:16 0RECV_B0@1:16 0B0 0STEP\n";
constexpr std::string_view kRank1 = "rank 1: 1RECV_F0@0:16 1F0 1B0 1SEND_B0@0:16 1STEP\n";

ValidationError rejected(const std::string& text, ErrorKind kind) {
  const Schedule s = load(text, "test.sched");
  const ValidationResult r = validate(s);
  EXPECT_FALSE(r.ok()) << "accepted:\n" << text;
  if (r.ok()) return {};
  EXPECT_EQ(r.error->kind, kind) << r.error->message << "\n" << r.error->grid;
  return *r.error;
}

void expect_names(const ValidationError& e, const std::string& rank_and_action) {
  EXPECT_NE(e.message.find(rank_and_action), std::string::npos)
      << "message: " << e.message << "\nexpected to contain: " << rank_and_action;
}

TEST(Validator, AcceptsACorrectHandWrittenPipeline) {
  const Schedule s = load(std::string(kPipeHeader) + std::string(kRank0) + std::string(kRank1));
  const ValidationResult r = validate(s);
  ASSERT_TRUE(r.ok()) << r.report(s);
  EXPECT_EQ(r.stats.actions, 10);
  EXPECT_EQ(r.stats.compute, 4);
  EXPECT_EQ(r.stats.transfers, 2);
  EXPECT_NE(r.report(s).find("valid: custom, dp=1 pp=2 tp=1"), std::string::npos);
}

TEST(Validator, MarksTheFailingStepInTheGrid) {
  const ValidationError e =
      rejected(std::string(kPipeHeader) + "rank 0: 0F0 0SEND_F0@1:16 0B0 0RECV_B0@1:16 0STEP\n" +
                   std::string(kRank1),
               ErrorKind::kMissingInput);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.step, 2);
  expect_names(e, "rank 0 (dp0 pp0 tp0) step 2 (0B0)");
  expect_names(e, "no 0RECV_B0 before it");
  EXPECT_NE(e.grid.find("step | rank 0"), std::string::npos) << e.grid;
  EXPECT_NE(e.grid.find("=>    2 | [0B0]"), std::string::npos) << e.grid;
  EXPECT_NE(e.grid.find("1B0"), std::string::npos) << e.grid;  // rank 1's column is there too
}

TEST(Validator, MissingWork) {
  expect_names(rejected("mesh pp=1\nmicrobatches 2\nrank 0: 0F0 0B0\n", ErrorKind::kMissingWork),
               "rank 0 (dp0 pp0 tp0) at the end of its program (step 2): missing work: stage 0 "
               "microbatch 1 never runs forward (no 0F1)");
  expect_names(rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0\n", ErrorKind::kMissingWork),
               "never runs backward");
  expect_names(rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0I0\n", ErrorKind::kMissingWork),
               "runs 0I0 but never 0W0");
  expect_names(rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0B0\n", ErrorKind::kMissingWork),
               "never runs its optimizer step (no 0STEP)");
  expect_names(rejected("mesh dp=2\nmicrobatches 1\nrank 0: 0F0 0B0\nrank 1: 0F0 0B0\n",
                        ErrorKind::kMissingWork),
               "no 0ALLREDUCE(dp)");
}

// What `simulate --schedule-out` writes for a ZeRO config (sim/predict/zero.cpp): the gradients
// reduce-scattered over dp, once after the last backward (ZeRO-1) or after each (ZeRO-2 and 3,
// hybrid sharding with an all-reduce of the shard after each), and gathered after STEP.
TEST(Validator, AcceptsZerosReduceScattersInPlaceOfTheDpAllReduce) {
  auto both = [](const std::string& program) {
    return "mesh dp=2\nmicrobatches 2\nrank 0: " + program + "\nrank 1: " + program + "\n";
  };
  for (const std::string program :
       {"0F0 0B0 0F1 0B1 0REDUCESCATTER(dp):64 0STEP 0ALLGATHER(dp):64",
        "0F0 0B0 0REDUCESCATTER(dp):64 0F1 0B1 0REDUCESCATTER(dp):64 0STEP 0ALLGATHER(dp):64",
        "0ALLGATHER(dp):64 0F0 0ALLGATHER(dp):64 0B0 0REDUCESCATTER(dp):64 0ALLREDUCE(dp):32 "
        "0ALLGATHER(dp):64 0F1 0ALLGATHER(dp):64 0B1 0REDUCESCATTER(dp):64 0ALLREDUCE(dp):32 "
        "0STEP"}) {
    const Schedule s = load(both(program));
    const ValidationResult r = validate(s);
    EXPECT_TRUE(r.ok()) << program << "\n" << (r.ok() ? "" : r.error->message);
  }
  // A reduce-scatter before the last microbatch's gradients exist reduces only some of them.
  expect_names(rejected(both("0F0 0B0 0REDUCESCATTER(dp):64 0F1 0B1 0STEP 0ALLGATHER(dp):64"),
                        ErrorKind::kMissingInput),
               "step 5 (0STEP): missing input: steps stage 0 before the dp "
               "all-reduce of its gradients (no 0ALLREDUCE(dp), nor under ZeRO a "
               "0REDUCESCATTER(dp), before it)");
  // Nor does an all-reduce before all the gradients exist count when no reduce-scatter came first.
  expect_names(rejected(both("0F0 0B0 0ALLREDUCE(dp):32 0F1 0B1 0STEP"), ErrorKind::kMissingInput),
               "step 2 (0ALLREDUCE(dp):32): missing input: all-reduces stage 0's gradients before "
               "its gradient work is done (1 of 2 microbatches)");
}

TEST(Validator, RepeatedWork) {
  expect_names(
      rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0F0 0B0 0STEP\n", ErrorKind::kRepeatedWork),
      "step 1 (0F0): repeated work");
  expect_names(
      rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0B0 0W0 0STEP\n", ErrorKind::kRepeatedWork),
      "step 2 (0W0)");
  expect_names(
      rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0B0 0I0 0STEP\n", ErrorKind::kRepeatedWork),
      "step 2 (0I0)");
  expect_names(rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0B0 0STEP 0STEP\n",
                        ErrorKind::kRepeatedWork),
               "step 3 (0STEP)");
  expect_names(rejected(std::string(kPipeHeader) +
                            "rank 0: 0F0 0SEND_F0@1:16 0SEND_F0@1:16 0RECV_B0@1:16 0B0 0STEP\n" +
                            std::string(kRank1),
                        ErrorKind::kRepeatedWork),
               "rank 0 (dp0 pp0 tp0) step 2 (0SEND_F0@1:16)");
}

TEST(Validator, ActionsBeforeTheirInputs) {
  const auto one = [](const std::string& program) {
    return rejected("mesh pp=1\nmicrobatches 1\nrank 0: " + program + "\n",
                    ErrorKind::kMissingInput);
  };
  expect_names(one("0B0 0F0 0STEP"), "step 0 (0B0): missing input: its forward 0F0 has not run");
  expect_names(one("0F0 0W0 0I0 0STEP"), "step 1 (0W0): missing input: its input gradient 0I0");
  expect_names(one("0F0 0STEP 0B0"), "step 1 (0STEP): missing input: steps stage 0 before");
  // F of stage 1 before F of stage 0 when both live on the rank.
  expect_names(rejected("mesh pp=1\nstages 2\nmicrobatches 1\nrank 0: 1F0 0F0 1B0 0B0 1STEP "
                        "0STEP\n",
                        ErrorKind::kMissingInput),
               "step 0 (1F0): missing input: its input comes from stage 0 on this rank");
  expect_names(rejected("mesh pp=1\nstages 2\nmicrobatches 1\nrank 0: 0F0 1F0 0B0 1B0 1STEP "
                        "0STEP\n",
                        ErrorKind::kMissingInput),
               "step 2 (0B0): missing input: its output gradient comes from stage 1");
  // Remote input: F before its RECV_F; sends before the compute that produces their data.
  expect_names(rejected(std::string(kPipeHeader) + std::string(kRank0) +
                            "rank 1: 1F0 1RECV_F0@0:16 1B0 1SEND_B0@0:16 1STEP\n",
                        ErrorKind::kMissingInput),
               "rank 1 (dp0 pp1 tp0) step 0 (1F0): missing input: its input has not arrived");
  expect_names(
      rejected(std::string(kPipeHeader) + "rank 0: 0SEND_F0@1:16 0F0 0RECV_B0@1:16 0B0 0STEP\n" +
                   std::string(kRank1),
               ErrorKind::kMissingInput),
      "rank 0 (dp0 pp0 tp0) step 0 (0SEND_F0@1:16): missing input: sends the output of "
      "0F0");
  expect_names(rejected(std::string(kPipeHeader) + std::string(kRank0) +
                            "rank 1: 1RECV_F0@0:16 1F0 1SEND_B0@0:16 1B0 1STEP\n",
                        ErrorKind::kMissingInput),
               "rank 1 (dp0 pp1 tp0) step 2 (1SEND_B0@0:16)");
  // STEP before the dp all-reduce; the all-reduce before the gradients exist.
  expect_names(rejected("mesh dp=2\nmicrobatches 1\nrank 0: 0F0 0B0 0STEP 0ALLREDUCE(dp)\n"
                        "rank 1: 0F0 0B0 0ALLREDUCE(dp) 0STEP\n",
                        ErrorKind::kMissingInput),
               "rank 0 (dp0 pp0 tp0) step 2 (0STEP): missing input: steps stage 0 before the dp "
               "all-reduce");
  expect_names(rejected("mesh dp=2\nmicrobatches 1\nrank 0: 0F0 0ALLREDUCE(dp) 0B0 0STEP\n"
                        "rank 1: 0F0 0B0 0ALLREDUCE(dp) 0STEP\n",
                        ErrorKind::kMissingInput),
               "rank 0 (dp0 pp0 tp0) step 1 (0ALLREDUCE(dp))");
}

TEST(Validator, SendWithoutRecvAndRecvWithoutSend) {
  // Rank 1 never takes microbatch 1: rank 0's send of it is never received.
  const ValidationError send = rejected(
      "mesh pp=2\nmicrobatches 2\n"
      "rank 0: 0F0 0SEND_F0@1:16 0F1 0SEND_F1@1:16 0RECV_B0@1:16 0B0\n"
      "rank 1: 1RECV_F0@0:16 1F0 1B0 1SEND_B0@0:16\n",
      ErrorKind::kUnmatchedSend);
  expect_names(send,
               "rank 0 (dp0 pp0 tp0) step 3 (0SEND_F1@1:16): send without recv: rank 1 "
               "never runs 1RECV_F1");
  EXPECT_NE(send.grid.find("[0SEND_F1@1:16]"), std::string::npos) << send.grid;
  // Rank 1 waits for an activation rank 0 never sends.
  const ValidationError recv = rejected(
      std::string(kPipeHeader) + "rank 0: 0F0 0RECV_B0@1:16 0B0 0STEP\n" + std::string(kRank1),
      ErrorKind::kUnmatchedRecv);
  expect_names(recv,
               "rank 1 (dp0 pp1 tp0) step 0 (1RECV_F0@0:16): recv without send: waits for "
               "0SEND_F0 from rank 0");
}

TEST(Validator, TransfersThatDisagree) {
  expect_names(rejected(std::string(kPipeHeader) + std::string(kRank0) +
                            "rank 1: 1RECV_F0@0:32 1F0 1B0 1SEND_B0@0:16 1STEP\n",
                        ErrorKind::kTransferMismatch),
               "rank 1 (dp0 pp1 tp0) step 0 (1RECV_F0@0:32): transfer mismatch: receives 32 "
               "bytes but rank 0 (dp0 pp0 tp0) step 1 (0SEND_F0@1:16) sends 16");
  // An explicit peer that is not where the next stage lives.
  expect_names(rejected("mesh pp=3\nmicrobatches 1\nrank 0: 0F0 0SEND_F0@2:16\nrank 1:\nrank 2:\n",
                        ErrorKind::kTransferMismatch),
               "names peer rank 2, but stage 1 of this replica lives on rank 1");
}

TEST(Validator, MalformedActions) {
  expect_names(rejected("mesh pp=2\nmicrobatches 1\nrank 0: 1F0\nrank 1:\n", ErrorKind::kMalformed),
               "step 0 (1F0): malformed: stage 1 lives on pp 1, not on this rank (pp 0)");
  expect_names(rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F3\n", ErrorKind::kMalformed),
               "microbatch 3 outside 0..0");
  expect_names(rejected("mesh pp=1\nmicrobatches 1\nrank 0: 0F0 0SEND_F0\n", ErrorKind::kMalformed),
               "has no next stage");
  expect_names(rejected("mesh pp=1\nstages 2\nmicrobatches 1\nrank 0: 0F0 0SEND_F0\n",
                        ErrorKind::kMalformed),
               "stage 1 is on this rank too");
  Schedule s = load("mesh pp=2\nmicrobatches 1\nrank 0:\nrank 1:\n");
  s.ranks.pop_back();
  const ValidationResult r = validate(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->kind, ErrorKind::kMalformed);
  EXPECT_EQ(r.error->rank, -1);
  EXPECT_NE(r.error->message.find("1 rank programs for mesh dp=1 pp=2 tp=1 of 2 ranks"),
            std::string::npos);
  // A schedule built in code that names the moe blocks' own groups (the text refuses them).
  Schedule ep = load("mesh dp=2\nmicrobatches 1\nrank 0: 0ALLTOALL(dp)\nrank 1: 0ALLTOALL(dp)\n");
  ep.ranks[1][0].group = mesh::GroupKind::kEp;
  const ValidationResult e = validate(ep);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error->kind, ErrorKind::kMalformed);
  EXPECT_NE(e.error->message.find("process group 'ep' is not a schedule's"), std::string::npos)
      << e.error->message;
}

TEST(Validator, CollectivesWhoseMembersDisagree) {
  // Bytes differ.
  expect_names(rejected("mesh dp=2\nmicrobatches 1\nrank 0: 0F0 0B0 0ALLREDUCE(dp):100 0STEP\n"
                        "rank 1: 0F0 0B0 0ALLREDUCE(dp):200 0STEP\n",
                        ErrorKind::kCollectiveMismatch),
               "rank 1 (dp1 pp0 tp0) step 2 (0ALLREDUCE(dp):200): collective mismatch: operation "
               "#0 of its dp group, where rank 0 (dp0 pp0 tp0) step 2 (0ALLREDUCE(dp):100)");
  // Order differs: two stages on one rank, all-reduced in opposite orders by the two replicas.
  expect_names(rejected("mesh dp=2\nstages 2\nmicrobatches 1\n"
                        "rank 0: 0F0 1F0 1B0 0B0 1ALLREDUCE(dp) 0ALLREDUCE(dp) 0STEP 1STEP\n"
                        "rank 1: 0F0 1F0 1B0 0B0 0ALLREDUCE(dp) 1ALLREDUCE(dp) 0STEP 1STEP\n",
                        ErrorKind::kCollectiveMismatch),
               "rank 1 (dp1 pp0 tp0) step 4 (0ALLREDUCE(dp))");
  // One member never joins.
  expect_names(
      rejected("mesh dp=2\nmicrobatches 1\nrank 0: 0F0 0B0 0ALLREDUCE(dp) 0ALLGATHER(dp) 0STEP\n"
               "rank 1: 0F0 0B0 0ALLREDUCE(dp) 0STEP\n",
               ErrorKind::kCollectiveMismatch),
      "rank 0 (dp0 pp0 tp0) step 3 (0ALLGATHER(dp)): collective mismatch: waits for rank 1 of "
      "its dp group, which finishes its program without reaching this operation");
  // tp ranks computing in different orders (their tp collectives are inside compute).
  expect_names(rejected("mesh tp=2\nmicrobatches 2\nrank 0: 0F0 0B0 0F1 0B1 0STEP\n"
                        "rank 1: 0F0 0F1 0B0 0B1 0STEP\n",
                        ErrorKind::kCollectiveMismatch),
               "rank 0 (dp0 pp0 tp0) step 1 (0B0): collective mismatch: operation #1 of its tp "
               "group, where rank 1 (dp0 pp0 tp1) step 1 (0F1)");
}

TEST(Validator, TwoRanksReceivingFirstDeadlock) {
  const ValidationError e =
      rejected(std::string(kPipeHeader) + "rank 0: 0RECV_B0@1:16 0F0 0SEND_F0@1:16 0B0 0STEP\n" +
                   std::string(kRank1),
               ErrorKind::kDeadlock);
  EXPECT_EQ(e.message,
            "deadlock: rank 0 (dp0 pp0 tp0) step 0 (0RECV_B0@1:16) waits for rank 1; rank 1 "
            "(dp0 pp1 tp0) step 0 (1RECV_F0@0:16) waits for rank 0 (2 of 2 ranks wait forever)");
  EXPECT_EQ(e.marks.size(), 2u);
  EXPECT_NE(e.grid.find("=>    0 | [0RECV_B0@1:16] | [1RECV_F0@0:16]"), std::string::npos)
      << e.grid;
}

TEST(Validator, CollectivesInCrossedOrderDeadlock) {
  // Ranks 0 and 3 gather over dp first, ranks 1 and 2 over tp first: 0 -> 2 -> 3 -> 1 -> 0.
  const std::string dp_first = "0F0 0B0 0ALLGATHER(dp) 0ALLGATHER(tp) 0ALLREDUCE(dp) 0STEP";
  const std::string tp_first = "0F0 0B0 0ALLGATHER(tp) 0ALLGATHER(dp) 0ALLREDUCE(dp) 0STEP";
  const ValidationError e =
      rejected("mesh dp=2 tp=2\nmicrobatches 1\nrank 0: " + dp_first + "\nrank 1: " + tp_first +
                   "\nrank 2: " + tp_first + "\nrank 3: " + dp_first + "\n",
               ErrorKind::kDeadlock);
  expect_names(e, "deadlock: rank 0 (dp0 pp0 tp0) step 2 (0ALLGATHER(dp)) waits for rank 2");
  expect_names(e, "(4 of 4 ranks wait forever)");
}

TEST(Validator, AcceptsBucketedAllReducesAndExplicitCollectives) {
  const Schedule s = load(
      "mesh dp=2\nmicrobatches 1\n"
      "rank 0: 0ALLGATHER(dp):8 0F0 0B0 0ALLREDUCE(dp):10 0ALLREDUCE(dp):20 0STEP\n"
      "rank 1: 0ALLGATHER(dp):8 0F0 0B0 0ALLREDUCE(dp):10 0ALLREDUCE(dp):20 0STEP\n");
  const ValidationResult r = validate(s);
  EXPECT_TRUE(r.ok()) << r.report(s);
  EXPECT_EQ(r.stats.collectives, 3);
}

TEST(Validator, DroppingOrRepeatingAnyActionOfAGeneratedScheduleIsCaught) {
  // Every action a generator emits is needed exactly once.
  for (const Family f : {Family::kOneFOneB, Family::kInterleaved, Family::kZbH1}) {
    GeneratorConfig c;
    c.family = f;
    c.mesh = {.dp = 2, .pp = 2, .tp = 2};
    c.microbatches = 2;
    c.virtual_stages = f == Family::kInterleaved ? 2 : 1;
    c.activation_bytes = {16};
    c.gradient_bytes = {64};
    const Schedule good = generate(c);
    ASSERT_TRUE(validate(good).ok());
    for (size_t r = 0; r < good.ranks.size(); ++r) {
      for (size_t i = 0; i < good.ranks[r].size(); ++i) {
        Schedule dropped = good;
        dropped.ranks[r].erase(dropped.ranks[r].begin() + static_cast<long>(i));
        EXPECT_FALSE(validate(dropped).ok()) << name(f) << ": dropping rank " << r << " step " << i;
        Schedule repeated = good;
        repeated.ranks[r].insert(repeated.ranks[r].begin() + static_cast<long>(i),
                                 good.ranks[r][i]);
        EXPECT_FALSE(validate(repeated).ok())
            << name(f) << ": repeating rank " << r << " step " << i;
      }
    }
  }
}

}  // namespace
}  // namespace meshscope::schedule
