// Several per-rank traces as one mesh Timeline: devices of every rank in rank order, clocks put on
// one axis by baseTimeNanoseconds and refined by the ends of the NCCL collectives every rank ran,
// with the skew that remains reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/traces/import_test_util.h"
#include "traces/analysis_stragglers.h"
#include "traces/import/kineto_names.h"
#include "traces/import/kineto_synth.h"
#include "traces/import/load_trace.h"
#include "traces/import/multi_rank.h"

namespace meshscope::traces {
namespace {

using testing::TempFile;

std::string synthetic(int rank, int64_t base_time_ns, int64_t clock_offset_ns) {
  SyntheticKinetoOptions o;
  o.iterations = 200;  // 12 all-reduces, 2 steps
  o.rank = rank;
  o.world_size = 2;
  o.base_time_ns = base_time_ns;
  o.clock_offset_ns = clock_offset_ns;
  std::string json;
  write_synthetic_kineto(o, [&](std::string_view s) { json += s; });
  return json;
}

const Span& first_of(const Timeline& t, uint16_t device, SpanKind kind) {
  for (const Span& s : t.spans) {
    if (s.device == device && s.kind == kind) return s;
  }
  throw std::runtime_error("no such span");
}

// Ranks written in reverse order on purpose: devices come out by rank, not by file order.
struct TwoRanks {
  TempFile r1, r0;
  std::vector<std::filesystem::path> files() const { return {r1.path(), r0.path()}; }
};

TEST(MultiRank, DevicesOfEveryRankInRankOrder) {
  TwoRanks ranks{TempFile(".json", synthetic(1, 1000, 0)),
                 TempFile(".json", synthetic(0, 1000, 0))};
  ImportReport report;
  const Timeline t = load_traces(ranks.files(), {}, &report);
  ASSERT_EQ(t.devices.size(), 4u);
  EXPECT_EQ(t.devices[0].name, "rank 0 · GPU 0");
  EXPECT_EQ(t.devices[1].name, "rank 0 · host");
  EXPECT_EQ(t.devices[2].name, "rank 1 · GPU 0");
  EXPECT_EQ(t.devices[2].rank, 1);
  EXPECT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.metadata.at("ranks"), "2");
  ASSERT_EQ(report.clocks.size(), 2u);
  EXPECT_EQ(report.clocks[0].rank, 0);
  EXPECT_EQ(report.clocks[1].file, ranks.r1.path().string());
}

TEST(MultiRank, BaseTimesPutRanksOnOneAxis) {
  // Rank 1's profiler started 2 ms later; its ts are relative to that start.
  TwoRanks ranks{TempFile(".json", synthetic(1, 1'000'000'000 + 2'000'000, -2'000'000)),
                 TempFile(".json", synthetic(0, 1'000'000'000, 0))};
  ImportOptions options;
  options.align = ClockAlign::kBaseTime;
  ImportReport report;
  const Timeline t = load_traces(ranks.files(), options, &report);
  EXPECT_EQ(report.clocks[1].offset_ns, 2'000'000);
  // Both ranks ran the same work at the same real time.
  EXPECT_EQ(first_of(t, 0, SpanKind::kCollective).end_ns,
            first_of(t, 2, SpanKind::kCollective).end_ns);
}

TEST(MultiRank, CollectiveEndsRemoveClockSkew) {
  // Rank 1's clock runs 37 µs ahead; the base times do not know it.
  TwoRanks ranks{TempFile(".json", synthetic(1, 5000, 37'000)),
                 TempFile(".json", synthetic(0, 5000, 0))};
  ImportOptions base_only;
  base_only.align = ClockAlign::kBaseTime;
  const Timeline skewed = load_traces(ranks.files(), base_only);
  EXPECT_EQ(first_of(skewed, 2, SpanKind::kCollective).end_ns -
                first_of(skewed, 0, SpanKind::kCollective).end_ns,
            37'000);

  ImportReport report;
  const Timeline t = load_traces(ranks.files(), {}, &report);  // kCollectiveEnds is the default
  EXPECT_EQ(report.clocks[1].offset_ns, -37'000);
  EXPECT_EQ(report.clocks[1].matched_collectives, 12);
  EXPECT_EQ(report.clocks[1].residual_skew_ns, 0);
  EXPECT_EQ(first_of(t, 2, SpanKind::kCollective).end_ns,
            first_of(t, 0, SpanKind::kCollective).end_ns);
  EXPECT_EQ(t.metadata.at("rank 1.clock_offset_ns"), "-37000");
}

TEST(MultiRank, ResidualSkewIsWhatTheMedianCannotExplain) {
  const auto rank_trace = [](int rank, std::initializer_list<int> ends_us) {
    std::string events;
    for (int end : ends_us) {
      if (!events.empty()) events += ",";
      events += R"J({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)",)J"
                R"("pid":0,"tid":40,"ts":)" +
                std::to_string(end - 50) + R"(,"dur":50})";
    }
    return R"({"distributedInfo":{"rank":)" + std::to_string(rank) +
           R"(},"baseTimeNanoseconds":0,"traceEvents":[)" + events + "]}";
  };
  TempFile r0(".json", rank_trace(0, {100, 200, 300, 400}));
  TempFile r1(".json", rank_trace(1, {105, 205, 306, 404}));  // 5 µs skew, ±1 µs jitter
  ImportReport report;
  const std::vector<std::filesystem::path> files = {r0.path(), r1.path()};
  load_traces(files, {}, &report);
  EXPECT_EQ(report.clocks[1].offset_ns, -5000);
  EXPECT_EQ(report.clocks[1].residual_skew_ns, 1000);
  EXPECT_EQ(report.clocks[1].max_skew_ns, 1000);
}

// A dp 2 × pp 2 NCCL job: ranks 0 and 1 are the two stages of one pipeline, 2 and 3 of the other.
// Each rank all-reduces its tied embedding with the other end of its pipeline ({0, 1}, {2, 3}),
// then its gradients twice with its data-parallel peer ({0, 2}, {1, 3}); the second stage's
// all-reduces end 200 µs before the first stage's. The groups' members are in each kernel's
// "Process Group Ranks", as PyTorch writes them. Ranks 1, 2 and 3 run clocks 37 µs ahead, 12 µs
// behind and 5 µs ahead.
// Rank `rank`'s NCCL all-reduces in Kineto's layout, each ending at `end_us` on a clock `skew_us`
// ahead, in a group whose "Process Group Ranks" are `members`.
struct AllReduce {
  int end_us;
  const char* members;
  bool broadcast = false;  // a broadcast in that group instead
};
std::string all_reduces(int rank, int skew_us, const std::vector<AllReduce>& collectives) {
  std::string events;
  for (const AllReduce& c : collectives) {
    if (!events.empty()) events += ",";
    events += std::string(R"J({"ph":"X","cat":"kernel","name":")J") +
              (c.broadcast ? "ncclDevKernel_Broadcast_RING_LL(x)"
                           : "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)") +
              R"(","pid":0,"tid":40,"ts":)" + std::to_string(c.end_us - 50 + skew_us) +
              R"(,"dur":50,"args":{"Collective name":")" +
              (c.broadcast ? "broadcast" : "allreduce") +
              R"(","Group size":2,)"
              R"("Process Group Ranks":")" +
              c.members + R"(","In msg nelems":1024,"Out msg nelems":1024,"dtype":"Float"}})";
  }
  return R"({"distributedInfo":{"backend":"nccl","rank":)" + std::to_string(rank) +
         R"(,"world_size":4},"baseTimeNanoseconds":0,"traceEvents":[)" + events + "]}";
}

TEST(MultiRank, OnlyCollectivesOfAGroupHoldingBothRanksMeasureTheirSkew) {
  TempFile r0(".json", all_reduces(0, 0, {{500, "[0, 1]"}, {1000, "[0, 2]"}, {2000, "[0, 2]"}}));
  TempFile r1(".json", all_reduces(1, 37, {{500, "[0, 1]"}, {800, "[1, 3]"}, {1800, "[1, 3]"}}));
  TempFile r2(".json", all_reduces(2, -12, {{450, "[2, 3]"}, {1000, "[0, 2]"}, {2000, "[0, 2]"}}));
  TempFile r3(".json", all_reduces(3, 5, {{450, "[2, 3]"}, {800, "[1, 3]"}, {1800, "[1, 3]"}}));
  ImportReport report;
  const std::vector<std::filesystem::path> files = {r0.path(), r1.path(), r2.path(), r3.path()};
  const Timeline t = load_traces(files, {}, &report);
  ASSERT_EQ(report.clocks.size(), 4u);
  // Rank 1 by the embedding's all-reduce alone, rank 2 by the two of its dp group; rank 3 shares
  // no group with rank 0, and is matched with rank 1, its dp peer.
  EXPECT_EQ(report.clocks[1].offset_ns, -37'000);
  EXPECT_EQ(report.clocks[1].matched_collectives, 1);
  EXPECT_EQ(report.clocks[1].reference_rank, 0);
  EXPECT_EQ(report.clocks[2].offset_ns, 12'000);
  EXPECT_EQ(report.clocks[2].matched_collectives, 2);
  EXPECT_EQ(report.clocks[2].reference_rank, 0);
  EXPECT_EQ(report.clocks[3].offset_ns, -5'000);
  EXPECT_EQ(report.clocks[3].matched_collectives, 2);
  EXPECT_EQ(report.clocks[3].reference_rank, 1);
  EXPECT_EQ(report.clocks[0].reference_rank, -1);
  for (const RankClock& c : report.clocks) EXPECT_EQ(c.residual_skew_ns, 0) << c.rank;
  // The stragglers pair each all-reduce with its own group's: 6 collectives of 2 ranks, whose
  // members end together (no rank waited for another after alignment), not 3 of 4 ranks.
  const StragglerAnalysis a = stragglers(t);
  ASSERT_EQ(a.instances.size(), 6u);
  for (const CollectiveInstance& c : a.instances) {
    ASSERT_EQ(c.spans.size(), 2u);
    const Collective* first = t.collective_of(c.spans[0]);
    ASSERT_NE(first, nullptr);
    for (const uint32_t span : c.spans) {
      EXPECT_EQ(first->has_member(t.devices[t.spans[span].device].rank), true);
      EXPECT_EQ(t.spans[span].end_ns, t.spans[c.spans[0]].end_ns);
    }
  }
}

// Rank 2 shares a group only with rank 3, which shares one with rank 1 (groups {0, 1}, {1, 3},
// {2, 3}): in rank order rank 2 comes before its only peer is aligned, and is aligned in the next
// round (it had been left on its base time).
TEST(MultiRank, ARankWhosePeersComeAfterItIsAlignedThroughThem) {
  TempFile r0(".json", all_reduces(0, 0, {{500, "[0, 1]"}}));
  TempFile r1(".json", all_reduces(1, 37, {{500, "[0, 1]"}, {900, "[1, 3]"}}));
  TempFile r2(".json", all_reduces(2, -12, {{700, "[2, 3]"}}));
  TempFile r3(".json", all_reduces(3, 5, {{700, "[2, 3]"}, {900, "[1, 3]"}}));
  ImportReport report;
  const std::vector<std::filesystem::path> files = {r0.path(), r1.path(), r2.path(), r3.path()};
  load_traces(files, {}, &report);
  ASSERT_EQ(report.clocks.size(), 4u);
  EXPECT_EQ(report.clocks[1].offset_ns, -37'000);
  EXPECT_EQ(report.clocks[3].offset_ns, -5'000);
  EXPECT_EQ(report.clocks[3].reference_rank, 1);
  EXPECT_EQ(report.clocks[2].offset_ns, 12'000);
  EXPECT_EQ(report.clocks[2].reference_rank, 3);
  EXPECT_EQ(report.clocks[2].matched_collectives, 1);
}

// Broadcasts, which the cost model does not price, still name their group: the dp groups'
// broadcasts of a dp 2 × pp 2 job ({0, 2}, {1, 3}, at other times) do not measure rank 1's skew
// against rank 0, which shares only the world's all-reduce with it.
TEST(MultiRank, BroadcastsAreMatchedWithinTheirGroupToo) {
  TempFile r0(".json", all_reduces(0, 0, {{100, "[0, 2]", true}, {500, "[0, 1, 2, 3]"}}));
  TempFile r1(".json", all_reduces(1, 37, {{300, "[1, 3]", true}, {500, "[0, 1, 2, 3]"}}));
  TempFile r2(".json", all_reduces(2, -12, {{100, "[0, 2]", true}, {500, "[0, 1, 2, 3]"}}));
  TempFile r3(".json", all_reduces(3, 5, {{300, "[1, 3]", true}, {500, "[0, 1, 2, 3]"}}));
  ImportReport report;
  const std::vector<std::filesystem::path> files = {r0.path(), r1.path(), r2.path(), r3.path()};
  load_traces(files, {}, &report);
  EXPECT_EQ(report.clocks[1].offset_ns, -37'000);
  EXPECT_EQ(report.clocks[1].matched_collectives, 1);
  EXPECT_EQ(report.clocks[2].matched_collectives, 2);
  EXPECT_EQ(report.clocks[3].matched_collectives, 1);
  for (const RankClock& c : report.clocks) EXPECT_EQ(c.max_skew_ns, 0) << c.rank;
}

// Rank 1 runs all-reduces in two groups ({0, 1} and {1, 3}), rank 3 in {2, 3} and {1, 3}: each
// group's k-th is numbered within its group, so every all-reduce pairs with its peer's (rank 1's
// {1, 3} all-reduce between its two {0, 1} ones had shifted their numbering, and none paired).
// Where a group's members are not listed, more devices running a name than the group has members
// ran no one collective.
TEST(MultiRank, StragglersNumberEachGroupsCollectivesApart) {
  TempFile r0(".json", all_reduces(0, 0, {{100, "[0, 1]"}, {300, "[0, 1]"}}));
  TempFile r1(".json", all_reduces(1, 0, {{100, "[0, 1]"}, {200, "[1, 3]"}, {300, "[0, 1]"}}));
  TempFile r2(".json", all_reduces(2, 0, {{150, "[2, 3]"}}));
  TempFile r3(".json", all_reduces(3, 0, {{150, "[2, 3]"}, {200, "[1, 3]"}}));
  std::vector<std::filesystem::path> files = {r0.path(), r1.path(), r2.path(), r3.path()};
  const StragglerAnalysis a = stragglers(load_traces(files));
  EXPECT_EQ(a.instances.size(), 4u);
  EXPECT_TRUE(a.unpaired.empty());
  for (const CollectiveInstance& c : a.instances) EXPECT_EQ(c.spans.size(), 2u) << c.occurrence;

  TempFile c0(".json", all_reduces(0, 0, {{100, "[0, 1, ...]"}}));
  TempFile c1(".json", all_reduces(1, 0, {{100, "[0, 1, ...]"}}));
  TempFile c2(".json", all_reduces(2, 0, {{150, "[2, 3, ...]"}}));
  TempFile c3(".json", all_reduces(3, 0, {{150, "[2, 3, ...]"}}));
  files = {c0.path(), c1.path(), c2.path(), c3.path()};
  const StragglerAnalysis cut = stragglers(load_traces(files));
  EXPECT_TRUE(cut.instances.empty());
  ASSERT_EQ(cut.unpaired.size(), 1u);
  EXPECT_EQ(cut.unpaired[0].group_ranks, 2);
  EXPECT_EQ(cut.unpaired[0].counts.size(), 4u);
}

TEST(MultiRank, DifferentCollectiveSequencesLeaveTheBaseTimeAlone) {
  const auto one = [](int rank, const char* kernel) {
    return R"({"distributedInfo":{"rank":)" + std::to_string(rank) +
           R"(},"baseTimeNanoseconds":0,"traceEvents":[{"ph":"X","cat":"kernel","name":")" +
           kernel + R"(","pid":0,"tid":40,"ts":10,"dur":5}]})";
  };
  TempFile r0(".json", one(0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  TempFile r1(".json", one(1, "ncclDevKernel_AllGather_RING_LL"));
  ImportReport report;
  const std::vector<std::filesystem::path> files = {r0.path(), r1.path()};
  load_traces(files, {}, &report);
  EXPECT_EQ(report.clocks[1].matched_collectives, 0);
  EXPECT_EQ(report.clocks[1].offset_ns, 0);
}

TEST(MultiRank, FilesOfDifferentJobsOrOneFileTwiceAreRefused) {
  // Ranks of two jobs merged had given steps of years and bubbles of 100% without a word.
  const auto one = [](int rank, int world, const char* backend) {
    return R"({"distributedInfo":{"rank":)" + std::to_string(rank) + R"(,"world_size":)" +
           std::to_string(world) + R"(,"backend":")" + backend +
           R"("},"baseTimeNanoseconds":0,"traceEvents":[{"ph":"X","cat":"kernel","name":"k",)"
           R"("pid":0,"tid":40,"ts":10,"dur":5}]})";
  };
  TempFile r0(".json", one(0, 2, "nccl"));
  const auto refusal = [](const std::vector<std::filesystem::path>& files,
                          const ImportOptions& options = {}) -> std::string {
    try {
      load_traces(files, options);
      return "loaded";
    } catch (const ImportError& e) {
      return e.what();
    }
  };
  TempFile other_world(".json", one(1, 4, "nccl"));
  EXPECT_EQ(refusal({r0.path(), other_world.path()}),
            other_world.path().string() + ": world_size 4, where " + r0.path().string() +
                " says 2: ranks of different jobs (give one job's files; analyze --rank-from "
                "file-order sets unrelated traces side by side)");
  TempFile other_backend(".json", one(1, 2, "gloo"));
  EXPECT_NE(refusal({r0.path(), other_backend.path()}).find(": backend gloo, where "),
            std::string::npos);
  TempFile outside(".json", one(2, 2, "nccl"));
  EXPECT_EQ(
      refusal({r0.path(), outside.path()}),
      outside.path().string() + ": rank 2 is outside its job's world_size 2 (distributedInfo)");
  // A rank that is no whole number >= 0 (a rank of -1 had been shown as a device "rank -1" beside
  // "no trace of rank 2"; a string "2" was no rank, the file's position used) is the file's error.
  for (const auto& [rank, said] :
       {std::pair{"-1", "distributedInfo.rank: -1 is no rank"},
        std::pair{"\"2\"", "distributedInfo.rank: \"2\" (a string) is no rank"},
        std::pair{"1.5", "distributedInfo.rank: 1.5 is no rank"}}) {
    std::string text = one(1, 2, "nccl");
    text.replace(text.find("\"rank\":1"), 8, std::string("\"rank\":") + rank);
    TempFile bad(".json", text);
    const std::string got = refusal({r0.path(), bad.path()});
    EXPECT_EQ(got.rfind(bad.path().string() + ": byte ", 0), 0u) << got;
    EXPECT_NE(got.find(said), std::string::npos) << got;
  }
  std::string no_world = one(1, 2, "nccl");
  no_world.replace(no_world.find("\"world_size\":2"), 14, "\"world_size\":0");
  TempFile zero_world(".json", no_world);
  EXPECT_NE(refusal({zero_world.path()}).find("distributedInfo.world_size: 0 is no world size"),
            std::string::npos);
  // The same file under another name.
  const std::filesystem::path again = r0.path().parent_path() / "." / r0.path().filename();
  EXPECT_EQ(refusal({r0.path(), again}), again.string() + ": given twice (also as " +
                                             r0.path().string() + "): each rank's file once");
  // Unrelated traces lined up on purpose are the user's to set side by side.
  ImportOptions in_order;
  in_order.rank_from_file_order = true;
  EXPECT_EQ(refusal({r0.path(), other_world.path()}, in_order), "loaded");
  TempFile r1(".json", one(1, 2, "nccl"));
  EXPECT_EQ(refusal({r0.path(), r1.path()}), "loaded");
  // A folder: a link that leads nowhere is no file of it; links in a loop are named.
  TempFile folder("");
  std::filesystem::create_directories(folder.path());
  std::filesystem::copy_file(r0.path(), folder.path() / "rank0.json");
  std::filesystem::create_symlink(folder.path() / "gone.json", folder.path() / "dangling.json");
  EXPECT_EQ(refusal({folder.path()}), "loaded");
  std::filesystem::create_symlink(folder.path() / "b.json", folder.path() / "a.json");
  std::filesystem::create_symlink(folder.path() / "a.json", folder.path() / "b.json");
  EXPECT_NE(
      refusal({folder.path()}).find(".json: cannot be read: Too many levels of symbolic links"),
      std::string::npos)
      << refusal({folder.path()});
}

// Ranks of one job run each step together. A rank whose steps lie wholly apart from the first
// rank's (a swapped file of another run) is named: merged by index, its step widened every step.
TEST(MultiRank, ARankWhoseStepsLieApartFromTheFirstRanksIsNamed) {
  const auto one = [](int rank, int64_t step_us) {
    const std::string ts = std::to_string(step_us);
    return R"({"distributedInfo":{"rank":)" + std::to_string(rank) +
           R"(,"world_size":2,"backend":"nccl"},"baseTimeNanoseconds":0,"traceEvents":[)"
           R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":)" +
           ts + R"(,"dur":100},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":40,"ts":)" + ts +
           R"(,"dur":50}]})";
  };
  TempFile r0(".json", one(0, 1'000'000));
  TempFile together(".json", one(1, 1'000'060));  // overlaps rank 0's step: one job
  TempFile apart(".json", one(1, 3'000'000));     // 1.9999 s after rank 0's step ends
  const auto warned = [](const std::vector<std::filesystem::path>& files, ImportReport& report) {
    const Timeline t = load_traces(files, {}, &report);
    return report.count(ImportWarning::kRankStepsApart);
  };
  ImportReport fine;
  EXPECT_EQ(warned({r0.path(), together.path()}, fine), 0u);
  ImportReport report;
  ASSERT_EQ(warned({r0.path(), apart.path()}, report), 1u);
  EXPECT_EQ(
      report.first_where[static_cast<size_t>(ImportWarning::kRankStepsApart)],
      "rank 1's steps (" + apart.path().string() + ") begin 2.000 s after rank 0's steps end");
}

// Two Nsight Systems reports of two runs (H100 and H200, their sessions 92 days apart) name no
// steps: their whole traces lie apart, and that is said (they had read as one job's two ranks,
// with a step of 92 days, without a word).
TEST(MultiRank, NsightReportsOfTwoRunsAreNamedAsLyingApart) {
  const std::filesystem::path nsys =
      std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "nsys";
  TempFile h100(".sqlite", testing::read_gz(nsys / "h100_fuser_report1_schema3.16.sqlite.gz"));
  TempFile h200(".sqlite", testing::read_gz(nsys / "h200_fuser_report1_schema3.17.sqlite.gz"));
  ImportReport report;
  const std::vector<std::filesystem::path> files = {h100.path(), h200.path()};
  load_traces(files, {}, &report);
  ASSERT_EQ(report.count(ImportWarning::kRankStepsApart), 1u);
  const std::string& where =
      report.first_where[static_cast<size_t>(ImportWarning::kRankStepsApart)];
  EXPECT_EQ(where.rfind("rank 1's trace (" + h200.path().string() + ") begin ", 0), 0u) << where;
  EXPECT_NE(where.find(" after rank 0's trace end"), std::string::npos) << where;
}

TEST(MultiRank, OffsetsThatWouldOverflowAreAnErrorNamingTheFile) {
  // Base times 4e18 ns apart and events near the end of the range on the later rank: shifting it
  // onto the earlier rank's axis would leave int64 (and the importers' ±2^62 ns).
  const auto one = [](int rank, const char* base, const char* ts) {
    return R"({"distributedInfo":{"rank":)" + std::to_string(rank) + R"(},"baseTimeNanoseconds":)" +
           base + R"(,"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":40,"ts":)" +
           ts + R"(,"dur":5}]})";
  };
  TempFile r0(".json", one(0, "0", "10"));
  TempFile r1(".json", one(1, "4000000000000000000", "4000000000000000"));
  const std::vector<std::filesystem::path> files = {r0.path(), r1.path()};
  try {
    load_traces(files);
    FAIL() << "no error";
  } catch (const ImportError& e) {
    EXPECT_EQ(e.file(), r1.path().string());
    EXPECT_NE(std::string(e.what()).find("clock offset of 4000000000000000000 ns"),
              std::string::npos)
        << e.what();
  }
}

TEST(MultiRank, AFolderOfTracesAndNamesForRanklessFiles) {
  TempFile folder("_ranks");
  std::filesystem::create_directory(folder.path());
  const std::string plain =
      R"([{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1}])";
  for (const char* name : {"b.json", "a.json.gz", "notes.txt"}) {
    const auto path = folder.path() / name;
    std::ofstream(path, std::ios::binary)
        << (std::string(name).ends_with(".gz") ? testing::gzip_bytes(plain) : plain);
  }
  const auto listed = trace_files_in(folder.path());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].filename(), "a.json.gz");
  const std::vector<std::filesystem::path> paths = {folder.path()};
  const Timeline t = load_traces(paths);
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "rank 0 · GPU 0");  // position in the folder when no rank is known
  EXPECT_EQ(t.devices[1].name, "rank 1 · GPU 0");
  EXPECT_EQ(t.devices[1].rank, 1);
}

TEST(MultiRank, TracePathsReadOneFileAloneAndAFolderOrSeveralAsRanks) {
  TwoRanks ranks{TempFile(".json", synthetic(1, 1000, 0)),
                 TempFile(".json", synthetic(0, 1000, 0))};
  const std::vector<std::filesystem::path> one = {ranks.r0.path()};
  EXPECT_EQ(load_trace_paths(one).metadata.count("clock_align"), 0u);  // load_trace's
  EXPECT_EQ(load_trace_paths(ranks.files()).metadata.at("ranks"), "2");
  TempFile folder("_ranks");
  std::filesystem::create_directory(folder.path());
  std::filesystem::copy_file(ranks.r0.path(), folder.path() / "rank0.json");
  const std::vector<std::filesystem::path> in_folder = {folder.path()};
  EXPECT_EQ(load_trace_paths(in_folder).metadata.count("clock_align"), 1u);  // load_traces'
  // A missing path is named, though one before it is there to read.
  const std::filesystem::path missing = folder.path() / "none.json";
  const std::vector<std::filesystem::path> with_missing = {ranks.r0.path(), missing};
  try {
    (void)load_trace_paths(with_missing);
    FAIL() << "a missing path was read";
  } catch (const ImportError& e) {
    EXPECT_EQ(std::string(e.what()), missing.string() + ": no such file or folder");
  }
}

TEST(MultiRank, CollectiveTypesFromKernelNames) {
  EXPECT_EQ(importer::collective_type("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)"),
            "AllReduce");
  EXPECT_EQ(importer::collective_type("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)"), "Broadcast");
  EXPECT_EQ(importer::collective_type("allreduce dp0"), "allreduce dp0");
}

TEST(MultiRank, CollectiveOpsAndGroupMembersFromPyTorchsArgs) {
  using importer::collective_op_named;
  EXPECT_EQ(collective_op_named("allreduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(collective_op_named("_allgather_base"), CollectiveOp::kAllGather);
  EXPECT_EQ(collective_op_named("all_gather_into_tensor"), CollectiveOp::kAllGather);
  EXPECT_EQ(collective_op_named("_reduce_scatter_base"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(collective_op_named("all_to_allv"), CollectiveOp::kAllToAll);
  EXPECT_EQ(collective_op_named("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"),
            CollectiveOp::kReduceScatter);
  EXPECT_EQ(collective_op_named("ncclKernel_AllReduce_RING_LL_Sum_float(x)"),
            CollectiveOp::kAllReduce);
  for (const char* other : {"broadcast", "reduce", "barrier", "send", "allreduce_coalesced",
                            "ncclDevKernel_SendRecv(x)", "ncclKernel_Broadcast_RING_LL(x)"})
    EXPECT_EQ(collective_op_named(other), std::nullopt) << other;

  // The call's own name decides over its kernel's: a coalesced all-reduce's element counts are
  // not one buffer's, and it is no all-reduce to fit.
  const Timeline coalesced = load_trace_bytes(
      R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL",)J"
      R"J("pid":0,"tid":40,"ts":10,"dur":5,"args":{"Collective name":"allreduce_coalesced",)J"
      R"J("Group size":2,"In msg nelems":8,"Out msg nelems":8,"dtype":"Float"}}]})J",
      "coalesced.json");
  ASSERT_EQ(coalesced.collectives.size(), 1u);
  EXPECT_EQ(coalesced.collectives[0].collective.op, CollectiveOp::kOther);

  using importer::evenly_spaced_ranks;
  EXPECT_EQ(evenly_spaced_ranks("[0, 1]", 2), std::pair(0, 1));
  EXPECT_EQ(evenly_spaced_ranks("[1, 3, 5, 7]", 4), std::pair(1, 2));
  EXPECT_EQ(evenly_spaced_ranks("[8,16]", 2), std::pair(8, 8));
  EXPECT_EQ(evenly_spaced_ranks("[0, 1, 3]", 3), std::nullopt);        // uneven
  EXPECT_EQ(evenly_spaced_ranks("[0, 1]", 3), std::nullopt);           // not the group's size
  EXPECT_EQ(evenly_spaced_ranks("[0, 1, 2, ...]", 64), std::nullopt);  // cut short
  EXPECT_EQ(evenly_spaced_ranks("[2, 0]", 2), std::nullopt);
  EXPECT_EQ(evenly_spaced_ranks("[]", 0), std::nullopt);
  EXPECT_EQ(evenly_spaced_ranks("0, 1", 2), std::nullopt);
}

}  // namespace
}  // namespace meshscope::traces
