// The schedule text format: load, dump round trips, defaults, and parse errors with line:column.
#include "sim/schedule/schedule_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace meshscope::schedule {
namespace {

constexpr std::string_view kTwoStage = R"(# meshscope schedule v1
name hand   # a comment after a header
mesh dp=1 pp=2 tp=1
stages 2
microbatches 1
stage_owner 0 1

rank 0: 0F0 0SEND_F0@1:16  0RECV_B0@1:16 0B0 0STEP
# a comment line between ranks
rank 1:	1RECV_F0@0:16 1F0 1B0 1SEND_B0@0:16 1STEP
)";

ScheduleParseError parse_error(std::string_view text) {
  try {
    load(text, "run.sched");
  } catch (const ScheduleParseError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ScheduleParseError("", 0, 0, "");
}

TEST(ScheduleText, LoadsHeaderAndRanks) {
  const Schedule s = load(kTwoStage, "two.sched");
  EXPECT_EQ(s.name, "hand");
  EXPECT_EQ(s.mesh, (mesh::MeshShape{.dp = 1, .pp = 2, .tp = 1}));
  EXPECT_EQ(s.num_stages, 2);
  EXPECT_EQ(s.num_microbatches, 1);
  EXPECT_EQ(s.stage_owner, (std::vector<int>{0, 1}));
  ASSERT_EQ(s.ranks.size(), 2u);
  ASSERT_EQ(s.ranks[0].size(), 5u);
  EXPECT_EQ(
      s.ranks[0][1],
      (Action{
          .kind = ActionKind::kSendForward, .stage = 0, .microbatch = 0, .peer = 1, .bytes = 16}));
  EXPECT_EQ(s.ranks[1][0].kind, ActionKind::kRecvForward);
  EXPECT_EQ(s.ranks[1][4].kind, ActionKind::kOptimizerStep);
}

// Where each rank's line and action are, for the validator's errors: 1-based, a tab one column,
// an OVERLAP_F_B group's two actions at its token.
TEST(ScheduleText, RecordsTheLineOfEachRankAndTheColumnOfEachAction) {
  ScheduleTextPositions at;
  load(kTwoStage, "two.sched", &at);
  EXPECT_EQ(at.rank_line, (std::vector<int>{8, 10}));
  EXPECT_EQ(at.action_column[0], (std::vector<int>{9, 13, 28, 42, 46}));
  EXPECT_EQ(at.action_column[1].front(), 9);
  load("mesh dp=1 pp=1 tp=1\nmicrobatches 2\nrank 0: 0F0 (0F1;0B0)OVERLAP_F_B 0B1\n", "o", &at);
  EXPECT_EQ(at.rank_line, (std::vector<int>{3}));
  EXPECT_EQ(at.action_column[0], (std::vector<int>{9, 13, 13, 34}));
}

TEST(ScheduleText, DumpThenLoadRoundTrips) {
  const Schedule s = load(kTwoStage);
  const std::string text = dump(s);
  const Schedule again = load(text);
  EXPECT_EQ(dump(again), text);
  EXPECT_EQ(again.ranks, s.ranks);
  EXPECT_EQ(again.stage_owner, s.stage_owner);
  EXPECT_EQ(again.mesh, s.mesh);
  EXPECT_EQ(again.name, s.name);
  EXPECT_NE(text.find("rank 1: 1RECV_F0@0:16 1F0 1B0 1SEND_B0@0:16 1STEP\n"), std::string::npos);
}

TEST(ScheduleText, HeaderDefaults) {
  const Schedule s = load("mesh pp=3\nmicrobatches 2\nstages 6\nrank 0:\nrank 1:\nrank 2:\n");
  EXPECT_EQ(s.name, "custom");
  EXPECT_EQ(s.mesh, (mesh::MeshShape{.dp = 1, .pp = 3, .tp = 1}));
  EXPECT_EQ(s.stage_owner, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(s.virtual_stages(), 2);
  EXPECT_TRUE(s.ranks[2].empty());
}

TEST(ScheduleText, ErrorsNameFileLineAndColumn) {
  const ScheduleParseError e =
      parse_error("mesh dp=1 pp=2 tp=1\nmicrobatches 1\nrank 0: 0F0\nrank 1: 1F0   1FOO0\n");
  EXPECT_EQ(e.source(), "run.sched");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.column(), 15);
  EXPECT_EQ(std::string(e.what()).rfind("run.sched:4:15: unknown action 'FOO'", 0), 0u) << e.what();
}

TEST(ScheduleText, RejectsStructuralMistakes) {
  const std::string head = "mesh pp=2\nmicrobatches 1\n";
  EXPECT_EQ(parse_error(head + "rank 0:\n").line(), 3);  // rank 1 missing: reported at the end
  EXPECT_NE(std::string(parse_error(head + "rank 0:\n").what()).find("rank 1"), std::string::npos);
  EXPECT_EQ(parse_error(head + "rank 0:\nrank 0:\nrank 1:\n").line(), 4);
  EXPECT_EQ(parse_error(head + "rank 2:\n").column(), 6);
  EXPECT_EQ(parse_error(head + "rank x: 0F0\n").line(), 3);
  EXPECT_EQ(parse_error("microbatches 1\nrank 0:\n").line(), 2);  // no mesh
  EXPECT_EQ(parse_error("mesh pp=1\nrank 0:\n").line(), 2);       // no microbatches
  EXPECT_EQ(parse_error("mesh pp=1\nmicrobatches 0\n").column(), 14);
  EXPECT_EQ(parse_error("mesh pp=1 pp=2\n").column(), 11);
  EXPECT_EQ(parse_error("mesh pp=-1\n").line(), 1);
  EXPECT_EQ(parse_error("mesh dp=1024 pp=1024 tp=1024\n").line(), 1);
  EXPECT_EQ(parse_error("mesh pp=2\nmicrobatches 1\nstage_owner 0 2\nrank 0:\n").line(), 3);
  EXPECT_EQ(parse_error("mesh pp=2\nmicrobatches 1\nstage_owner 0\nrank 0:\n").line(), 4);
  EXPECT_EQ(parse_error("mesh pp=1\nmicrobatches 1\nfoo 3\n").line(), 3);
  EXPECT_EQ(parse_error("mesh pp=1\nmicrobatches 1\nrank 0:\nstages 1\n").line(), 4);
  EXPECT_EQ(parse_error("mesh pp=1\nmesh pp=1\n").line(), 2);
  EXPECT_EQ(parse_error("# meshscope schedule v2\nmesh pp=1\n").line(), 1);
}

TEST(ScheduleText, LoadFileAndSaveFileWriteWholeFiles) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "meshscope_text_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "two.sched").string();
  const Schedule s = load(kTwoStage);
  save_file(s, path);
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
  const Schedule back = load_file(path);
  EXPECT_EQ(back.ranks, s.ranks);
  try {
    load_file((dir / "missing.sched").string());
    ADD_FAILURE() << "loaded a missing file";
  } catch (const ScheduleParseError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.sched"), std::string::npos);
    EXPECT_EQ(e.line(), 0);
  }
  EXPECT_THROW(save_file(s, (dir / "no_such_dir" / "x.sched").string()), std::runtime_error);
  try {
    load_file(dir.string());  // a directory opens as a stream but reads as nothing
    ADD_FAILURE() << "loaded a directory";
  } catch (const ScheduleParseError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(ScheduleText, AFileOverTheSizeLimitIsRefusedBeforeItIsRead) {
  // A sparse file of 65 MiB costs no disk; /dev/zero never ends.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "meshscope_text_big";
  std::filesystem::create_directories(dir);
  const std::filesystem::path big = dir / "big.sched";
  std::ofstream(big) << "mesh pp=1\n";
  std::filesystem::resize_file(big, kMaxScheduleFileBytes + 1);
  try {
    load_file(big.string());
    ADD_FAILURE() << "loaded a 65 MiB file";
  } catch (const ScheduleParseError& e) {
    EXPECT_NE(std::string(e.what()).find("is 67108865 bytes, more than the 64 MiB a schedule file "
                                         "may have"),
              std::string::npos)
        << e.what();
  }
  try {
    load_file("/dev/zero");
    ADD_FAILURE() << "loaded /dev/zero";
  } catch (const ScheduleParseError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the 64 MiB"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(ScheduleText, InputQuotedInErrorsIsEscapedAndShort) {
  // Control bytes (an ANSI escape, NUL, a bell) never reach the terminal raw.
  const std::string evil = std::string("0F0\x1b[2J\x07") + '\0' + "x";
  const std::string text = "mesh pp=1\nmicrobatches 1\nrank 0: " + evil + "\n";
  const std::string what = parse_error(text).what();
  EXPECT_NE(what.find("\\x1b[2J\\x07\\x00x"), std::string::npos) << what;
  for (const char c : what) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << what;
  // A 10 MB token: a short line, the token cut once with its size.
  const std::string huge(10'000'000, 'F');
  const std::string long_what =
      parse_error("mesh pp=1\nmicrobatches 1\nrank 0: 0" + huge + "\n").what();
  EXPECT_LT(long_what.size(), 600u) << long_what.substr(0, 600);
  EXPECT_NE(long_what.find("(10000001 bytes)"), std::string::npos) << long_what;
  // In a header word and the file name too.
  EXPECT_NE(
      std::string(parse_error("mesh pp=1\nmicrobatches 1\nna\x1bme x\n").what()).find("na\\x1bme"),
      std::string::npos);
  EXPECT_THROW(load("name bad\x1bname\nmesh pp=1\nmicrobatches 1\nrank 0:\n"), ScheduleParseError);
}

}  // namespace
}  // namespace meshscope::schedule
