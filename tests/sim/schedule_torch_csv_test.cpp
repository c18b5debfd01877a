// torch's schedule CSV: every file torch 2.15 wrote (tests/fixtures/torch_orders) reads into a
// valid Schedule and writes back byte for byte, directly and through meshscope's schedule text;
// malformed cells are rejected with file, line and column.
#include "sim/schedule/torch_csv.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/validator.h"
#include "tests/sim/torch_orders_fixture.h"

namespace meshscope::schedule {
namespace {

namespace fs = std::filesystem;

const fs::path& kDir = testing::kTorchOrdersDir;
using testing::read;

std::vector<fs::path> fixtures(std::string_view suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kDir)) {
    if (e.path().string().ends_with(suffix)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string parse_error(std::string_view text) {
  try {
    parse_torch_csv(text, "x.csv");
  } catch (const ScheduleParseError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(TorchCsv, EveryTorchFileRoundTripsByteForByte) {
  const std::vector<fs::path> files = fixtures(".csv");
  ASSERT_GE(files.size(), 40u) << kDir;
  for (const fs::path& p : files) {
    SCOPED_TRACE(p.filename().string());
    const std::string text = read(p);
    const TorchCsv csv = parse_torch_csv(text, p.string());
    EXPECT_EQ(write_torch_csv(csv.schedule, csv.format), text);
    // Through meshscope's schedule text and back.
    const Schedule again = load(dump(csv.schedule), "dumped");
    EXPECT_EQ(write_torch_csv(again, csv.format), text);
  }
}

// torch's lowering keeps each rank's compute order, so compute_comms written as compute_only is
// torch's compute_only file without its idle cells.
std::string without_idle_cells(const std::string& csv) {
  std::string out, cell;
  for (char c : csv) {
    if (c == ',' || c == '\r') {
      if (!cell.empty()) out += (out.empty() || out.back() == '\n' ? "" : ",") + cell;
      cell.clear();
      if (c == '\r') out += "\r";
    } else if (c == '\n') {
      out += '\n';
    } else {
      cell += c;
    }
  }
  return out;
}

TEST(TorchCsv, ComputeCommsWrittenAsComputeOnlyKeepsTorchsComputeOrder) {
  for (const fs::path& p : fixtures(".compute_comms.csv")) {
    SCOPED_TRACE(p.filename().string());
    std::string only = p.string();
    only.replace(only.find(".compute_comms.csv"), 18, ".compute_only.csv");
    const TorchCsv comms = parse_torch_csv(read(p), p.string());
    EXPECT_EQ(write_torch_csv(comms.schedule, TorchCsvFormat::kComputeOnly),
              without_idle_cells(read(only)));
  }
}

TEST(TorchCsv, FormatIsDetectedFromTheCells) {
  for (const fs::path& p : fixtures(".compute_only.csv")) {
    EXPECT_EQ(parse_torch_csv(read(p)).format, TorchCsvFormat::kComputeOnly) << p;
  }
  for (const fs::path& p : fixtures(".compute_comms.csv")) {
    EXPECT_EQ(parse_torch_csv(read(p)).format, TorchCsvFormat::kComputeComms) << p;
  }
  // _get_pipeline_order() of GPipe and 1F1B: compute cells, then REDUCE_GRAD and its wait.
  for (const fs::path& p : fixtures(".pipeline_order.csv")) {
    EXPECT_EQ(parse_torch_csv(read(p)).format, TorchCsvFormat::kPipelineOrder) << p;
  }
}

// Both of torch's variants are schedules meshscope can run: compute_only lowered by meshscope,
// compute_comms with torch's own SEND/RECV order.
TEST(TorchCsv, TorchSchedulesValidate) {
  for (const std::string_view suffix : {".compute_only.csv", ".compute_comms.csv"}) {
    for (const fs::path& p : fixtures(suffix)) {
      SCOPED_TRACE(p.filename().string());
      const Schedule s = parse_torch_csv(read(p), p.string()).schedule;
      const ValidationResult r = validate(s);
      EXPECT_TRUE(r.ok()) << r.report(s);
    }
  }
  // GPipe's pipeline_order is its compute order, lowered as compute_only; 1F1B's is torch's IR,
  // which names a forward its runtime never runs (schedule_torch_orders_test.cpp).
  for (const fs::path& p : fixtures(".pipeline_order.csv")) {
    if (p.filename().string().rfind("gpipe", 0) != 0) continue;
    SCOPED_TRACE(p.filename().string());
    const Schedule s = parse_torch_csv(read(p), p.string()).schedule;
    const ValidationResult r = validate(s);
    EXPECT_TRUE(r.ok()) << r.report(s);
  }
}

TEST(TorchCsv, PlacementAndCountsComeFromTheRows) {
  const Schedule zbv = parse_torch_csv(read(kDir / "zb-v_pp4_m8_v2.compute_only.csv")).schedule;
  EXPECT_EQ(zbv.mesh.pp, 4);
  EXPECT_EQ(zbv.num_stages, 8);
  EXPECT_EQ(zbv.num_microbatches, 8);
  EXPECT_EQ(zbv.stage_owner, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));  // the V
  const Schedule loop =
      parse_torch_csv(read(kDir / "interleaved_pp2_m4_v3.compute_only.csv")).schedule;
  EXPECT_EQ(loop.stage_owner, (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

TEST(TorchCsv, OverlapGroupsStayTogether) {
  const Schedule s = parse_torch_csv("0F0,0F1,(0F2;1B0)OVERLAP_F_B,1F0,1B1\r\n").schedule;
  ASSERT_EQ(s.mesh.pp, 1);
  // 0F0 0F1 0F2* 1B0 ... (pp=1: no transfers between stages on the same rank)
  const std::vector<Action>& r = s.ranks[0];
  ASSERT_GE(r.size(), 4u);
  EXPECT_EQ(to_string(r[2]), "0F2");
  EXPECT_TRUE(r[2].overlap_next);
  EXPECT_EQ(to_string(r[3]), "1B0");
  EXPECT_FALSE(r[3].overlap_next);
  EXPECT_NE(dump(s).find("(0F2;1B0)OVERLAP_F_B"), std::string::npos);
}

TEST(TorchCsv, CsvQuotingAsPythonWritesIt) {
  // A row of one empty cell is written quoted (csv.writer does, to tell it from a blank row); it
  // reads as a row, of a rank that runs no stage, which torch cannot run: refused, as a blank
  // line is (it had read as one more, idle, pp rank).
  EXPECT_EQ(parse_error("0F0,1F0,1B0,0B0\r\n\"\"\r\n"),
            "x.csv:2: row 2 runs no stage: each row is a pp rank, and every rank runs one");
  EXPECT_EQ(parse_error("0F0,0F1,0B0,0B1\r\n\r\n1F0,1B0,1F1,1B1\r\n"),
            "x.csv:2: row 2 runs no stage (a blank line): each row is a pp rank, and every rank "
            "runs one");
  Schedule idle_rank = parse_torch_csv("0F0,0B0\r\n").schedule;
  idle_rank.ranks.emplace_back();
  idle_rank.markers.emplace_back();
  idle_rank.mesh.pp = 2;
  EXPECT_EQ(write_torch_csv(idle_rank, TorchCsvFormat::kComputeOnly), "0F0,0B0\r\n\r\n");
  // A quoted cell reads like the bare one; \n line ends are accepted (torch writes \r\n).
  EXPECT_EQ(
      write_torch_csv(parse_torch_csv("\"0F0\",0B0\n").schedule, TorchCsvFormat::kComputeOnly),
      "0F0,0B0\r\n");
}

TEST(TorchCsv, MalformedCellsNameFileLineAndColumn) {
  EXPECT_EQ(parse_error("0F0,0B0\r\n1F0,3FOO2\r\n"), "x.csv:2:5: unknown action 'FOO' in '3FOO2'");
  EXPECT_EQ(parse_error("0F0,0SEND_F0@1:8,0B0\n"),
            "x.csv:1:5: '0SEND_F0@1:8': torch's CSV has no peers or byte counts");
  EXPECT_NE(parse_error("0F0,0STEP\n").find("x.csv:1:5: '0STEP' is a meshscope action"),
            std::string::npos);
  EXPECT_EQ(parse_error("0F0,0SEND_F0,,0B0\n1RECV_F0,1F0,1B0\n").substr(0, 11), "x.csv:1:14:");
  EXPECT_EQ(parse_error("0F0,0B0\n0F1,0B1\n"),
            "x.csv:2:1: stage 0 is on row 1 and row 2; a stage lives on one rank");
  EXPECT_EQ(parse_error("0F0,\"0B0\n"), "x.csv:1:5: unterminated quote");
  EXPECT_EQ(parse_error(""), "x.csv:1: empty file: a torch schedule CSV has one row per pp rank");
  EXPECT_EQ(parse_error("1F0,1B0\n"),
            "x.csv: stage 0 appears nowhere, but stage 1 does (stages are numbered from 0)");
  EXPECT_NE(
      parse_error("(0F1;0SEND_F1)OVERLAP_F_B\n").find("x.csv:1:1: OVERLAP_F_B groups compute"),
      std::string::npos);
  // Bytes that are not text are escaped; long tokens truncated.
  EXPECT_EQ(parse_error(std::string("0F0,0\x01Q\n")), "x.csv:1:5: not a torch action: '0\\x01Q'");
  const std::string err = parse_error("0F0,0" + std::string(100, 'X') + "\n");
  EXPECT_NE(err.find("'..."), std::string::npos) << err;
  EXPECT_LT(err.size(), 140u) << err;
}

// torch 2.15's _load_csv refuses a compute_comms file unless every send of a row is retired by
// one WAIT_SEND after it (_validate_send_waits): so does meshscope, naming the cell.
TEST(TorchCsv, EverySendOfAComputeCommsRowIsWaitedForOnce) {
  const std::string rank1 = "1RECV_F0,1F0,1B0,1SEND_B0,1WAIT_SEND_B0\r\n";
  EXPECT_EQ(parse_error("0F0,0SEND_F0,0RECV_B0,0B0\r\n" + rank1),
            "x.csv:1:5: '0SEND_F0' has no '0WAIT_SEND_F0' after it on this row; torch refuses a "
            "compute_comms schedule whose sends it does not wait for");
  EXPECT_EQ(parse_error("0F0,0SEND_F0,0WAIT_SEND_F1,0RECV_B0,0B0,0WAIT_SEND_F0\r\n" + rank1),
            "x.csv:1:14: '0WAIT_SEND_F1' waits for '0SEND_F1', which no earlier cell of this row "
            "sends (torch refuses it: \"no pending send\")");
  EXPECT_EQ(parse_error("0F0,0WAIT_SEND_F0,0SEND_F0,0RECV_B0,0B0\r\n" + rank1).substr(0, 11),
            "x.csv:1:5: ");
  EXPECT_EQ(parse_error("0F0,0SEND_F0,0SEND_F0,0RECV_B0,0B0,0WAIT_SEND_F0\r\n" + rank1),
            "x.csv:1:14: '0SEND_F0' a second time on this row (torch refuses it: \"Duplicate "
            "pipeline send\")");
  EXPECT_EQ(parse_error("0F0,0SEND_F0,0RECV_B0,0B0,0WAIT_SEND_F0\r\n" + rank1), "(parsed)");
  // torch before WAIT_SEND wrote and read compute_comms without any; a trace can end mid-step.
  EXPECT_EQ(parse_error("0F0,0SEND_F0,0RECV_B0,0B0\r\n1RECV_F0,1F0,1B0,1SEND_B0\r\n"), "(parsed)");
  EXPECT_NO_THROW(parse_torch_csv("0F0,0SEND_F0,0RECV_B0,0B0\r\n" + rank1, "x.csv",
                                  /*check_send_waits=*/false));
}

// Corrupted torch files (bytes replaced, deleted, duplicated; seeded) either read or give a
// ScheduleParseError; what reads writes back and validates without any other exception.
TEST(TorchCsv, CorruptedFilesFailCleanly) {
  std::mt19937 rng(20260101);
  const std::vector<fs::path> files = fixtures(".csv");
  const std::string alphabet = "0123456789FBIWSEND_RCVUHAOLP(;),\"\r\n \x01\xff";
  int parsed = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = read(files[rng() % files.size()]);
    for (int edits = 1 + rng() % 3; edits > 0 && !text.empty(); --edits) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, text.substr(at, 1 + rng() % 12));
      }
    }
    try {
      const TorchCsv csv = parse_torch_csv(text, "fuzz.csv");
      (void)write_torch_csv(csv.schedule, csv.format);
      (void)validate(csv.schedule);
      ++parsed;
    } catch (const ScheduleParseError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.csv", 0), 0u) << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

TEST(TorchCsv, GeneratedSchedulesWriteAsComputeOnlyTorchReads) {
  GeneratorConfig c;
  c.family = Family::kOneFOneB;
  c.mesh = {.dp = 1, .pp = 2, .tp = 1};
  c.microbatches = 3;
  const Schedule s = generate(c);
  EXPECT_EQ(write_torch_csv(s, TorchCsvFormat::kComputeOnly),
            "0F0,0F1,0B0,0F2,0B1,0B2\r\n1F0,1B0,1F1,1B1,1F2,1B2\r\n");
  // With comms, every send has its WAIT_SEND after it, which torch's _load_csv requires of a
  // compute_comms row ("Pipeline sends at rank 0 have no matching wait"): a generated schedule
  // has none of torch's markers, so they go at the row's end. Read back, it writes the same.
  const std::string comms = write_torch_csv(s, TorchCsvFormat::kComputeComms);
  EXPECT_EQ(comms,
            "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0F2,0SEND_F2,0RECV_B1,0B1,0RECV_B2,0B2,"
            "0WAIT_SEND_F0,0WAIT_SEND_F1,0WAIT_SEND_F2\r\n"
            "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1,1RECV_F2,1F2,1B2,1SEND_B2,"
            "1WAIT_SEND_B0,1WAIT_SEND_B1,1WAIT_SEND_B2\r\n");
  const TorchCsv back = parse_torch_csv(comms);
  EXPECT_EQ(back.format, TorchCsvFormat::kComputeComms);
  EXPECT_EQ(write_torch_csv(back.schedule, TorchCsvFormat::kComputeComms), comms);
  c.mesh.dp = 2;
  EXPECT_THROW(write_torch_csv(generate(c), TorchCsvFormat::kComputeOnly), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::schedule
