// `meshscope schedules`, `validate` and `run` with torch.distributed.pipelining's schedule CSV, as
// a user hands it over: converted both ways byte for byte, checked, and executed on the cpu
// backend.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>

#include "tests/cli/cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const fs::path kTorch = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch_orders";

TEST(SchedulesCli, TorchCsvThroughScheduleTextComesBackByteForByte) {
  const fs::path dir = temp_dir("schedules_torch");
  for (const char* name :
       {"dualpipe-v_pp4_m8_v2.compute_comms.csv", "interleaved-zb_pp4_m8_v2.compute_only.csv",
        "looped-bfs_pp3_m5_v3.compute_comms.csv", "gpipe_pp3_m5_v1.pipeline_order.csv"}) {
    SCOPED_TRACE(name);
    const fs::path csv = kTorch / name;
    const fs::path sched = dir / "s.sched", back = dir / "back.csv";
    Result r = shell(kBin + " schedules --from " + csv.string() + " -o " + sched.string());
    ASSERT_EQ(r.status, 0) << r.err;
    r = shell(kBin + " schedules --from " + sched.string() + " --format torch-csv -o " +
              back.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(back), read_file(csv));
  }
}

TEST(SchedulesCli, ValidateTakesTorchCsvAndNamesTheBadCell) {
  const fs::path dir = temp_dir("validate_torch");
  Result r = shell(kBin + " validate " + (kTorch / "zb-v_pp4_m8_v2.compute_only.csv").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("valid: torch, dp=1 pp=4 tp=1, 8 stages"), std::string::npos) << r.out;
  std::ofstream(dir / "bad.csv") << "0F0,0B0\r\n1F0,3FOO2\r\n";
  r = shell(kBin + " validate " + (dir / "bad.csv").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("bad.csv:2:5: unknown action 'FOO' in '3FOO2'"), std::string::npos) << r.err;
}

// A CSV that reads but does not validate names the cell at fault, as schedule text does: a
// compute_only row's transfers (meshscope's lowering) and a compute_comms row's cells alike.
TEST(SchedulesCli, ATorchCsvThatDoesNotValidateNamesTheCell) {
  const fs::path dir = temp_dir("validate_torch_cell");
  for (const auto& [text, where] :
       {std::pair{"0F0,0F1,0B0,0B1\r\n1F0,1B0,1B1,1F1\r\n", "only.csv:2:9: rank 1"},
        std::pair{"0F0,0SEND_F0,0RECV_B0,0B0,0WAIT_SEND_F0\r\n"
                  "1RECV_F0,1B0,1F0,1SEND_B0,1WAIT_SEND_B0\r\n",
                  "comms.csv:2:10: rank 1"}}) {
    const fs::path csv = dir / (std::string(where).substr(0, std::string(where).find(':')));
    std::ofstream(csv, std::ios::binary) << text;
    for (const std::string& cmd :
         {"validate " + csv.string(), "run --layers 2 --schedule-file " + csv.string()}) {
      const Result r = shell(kBin + " " + cmd);
      EXPECT_EQ(r.status, 1) << cmd;
      EXPECT_NE(r.err.find(where), std::string::npos) << cmd << "\n" << r.err;
      EXPECT_NE(r.err.find("missing input: its forward 1F"), std::string::npos) << r.err;
    }
  }
}

// A config or a trace given where a schedule file goes is named for what it is; read as torch's
// CSV, its first character had been "not a torch action".
TEST(SchedulesCli, AConfigOrATraceGivenAsAScheduleIsNamedAsSuch) {
  const std::string config =
      std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/korthikanti-175b.json";
  const std::string trace =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/torch/1F1B/rank0.json.gz";
  for (const std::string& cmd :
       {"validate " + config, "simulate --config " + config + " --schedule-file " + config,
        "run --schedule-file " + config + " --layers 2", "schedules --from " + config}) {
    const Result r = shell(kBin + " " + cmd);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_NE(r.err.find(config + ": a JSON file (a config or a trace?), not a schedule"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
  const Result r = shell(kBin + " validate " + trace);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(trace + ": a gzip-compressed file (a trace?), not a schedule"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("meshscope schedules --from-trace DIR"), std::string::npos) << r.err;
}

// An editor's UTF-8 byte-order mark before either form is skipped; a binary file is named as one,
// not read as a CSV of bad actions.
TEST(SchedulesCli, AByteOrderMarkIsSkippedAndABinaryFileNamed) {
  const fs::path dir = temp_dir("schedules_bom");
  const std::string csv = read_file(kTorch / "zb-v_pp4_m8_v2.compute_only.csv");
  std::ofstream(dir / "bom.csv", std::ios::binary) << "\xEF\xBB\xBF" << csv;
  Result r = shell(kBin + " validate " + (dir / "bom.csv").string());
  EXPECT_EQ(r.status, 0) << r.err;
  r = shell(kBin + " schedules --dump 1f1b --pp 2 -m 2 -o " + (dir / "s.sched").string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::ofstream(dir / "bom.sched", std::ios::binary)
      << "\xEF\xBB\xBF" << read_file(dir / "s.sched");
  r = shell(kBin + " validate " + (dir / "bom.sched").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("valid: 1f1b,"), std::string::npos) << r.out;
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  std::ofstream(dir / "garbage.bin", std::ios::binary) << bytes;
  r = shell(kBin + " validate " + (dir / "garbage.bin").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("garbage.bin: not text: byte 0 is 0x00 (a binary file?)"), std::string::npos)
      << r.err;
}

// With no mesh or microbatch flags, a dump is the schedule `run -s FAMILY` executes: its mesh,
// stages and microbatches (the bytes are the workload's).
TEST(SchedulesCli, ADumpHasRunsDefaults) {
  const fs::path dir = temp_dir("schedules_defaults");
  const auto header = [](const std::string& text) {
    std::string out;
    for (const char* key : {"\nmesh ", "\nstages ", "\nmicrobatches "}) {
      const size_t at = text.find(key);
      if (at != std::string::npos) out += text.substr(at, text.find('\n', at + 1) - at);
    }
    return out;
  };
  for (const std::string family : {"1f1b", "dp", "tp"}) {
    SCOPED_TRACE(family);
    const Result dump = shell(kBin + " schedules --dump " + family);
    ASSERT_EQ(dump.status, 0) << dump.err;
    const fs::path ran = dir / (family + ".sched");
    const Result run =
        shell(kBin + " run -s " + family +
              " --model mlp --hidden 8 --steps 1 --no-check --dump-schedule " + ran.string());
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(header(dump.out), header(read_file(ran)));
    EXPECT_NE(header(dump.out).find("microbatches 8"), std::string::npos) << dump.out;
  }
}

TEST(SchedulesCli, RunExecutesTorchsDualPipeVEqualToOneDevice) {
  const fs::path dir = temp_dir("run_torch");
  const Result r = shell(kBin + " run --backend cpu --steps 1 --schedule-file " +
                         (kTorch / "dualpipe-v_pp2_m4_v2.compute_comms.csv").string() + " --out " +
                         (dir / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("equal ("), std::string::npos) << r.out;
}

// The rank lines of a schedule text, peers and byte counts left out (torch's CSV names neither).
std::string programs(const fs::path& sched) {
  std::string out;
  std::istringstream in(read_file(sched));
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("rank ")) continue;
    out += std::regex_replace(line, std::regex("(@[0-9]+)?:[0-9]+"), "") + "\n";
  }
  return out;
}

// torch posts a receive where its compute_comms CSV places it and waits for the data at the
// compute that needs it; meshscope's RECV waits where it stands. Its receives are moved to their
// use, its steps after the stage's last sends, so the CSV with comms runs and simulates as the
// compute order alone does: ZB-V's took 588 ms (31.8% bubble) against 424 ms (7.0%).
TEST(SchedulesCli, TorchsCsvWithCommsRunsAsItsComputeOrderDoes) {
  const fs::path dir = temp_dir("torch_comms");
  for (const auto& [name, config] :
       {std::pair{"zb-v_pp4_m8_v2", R"({"model": {"kind": "mlp", "layers": 16, "hidden": 4096},
            "mesh": {"pp": 4}, "batch": {"global": 65536, "micro": 8192}, "schedule": "zb-v",
            "cluster": {"gpu": "h100-sxm"}})"},
        std::pair{"interleaved_pp2_m4_v2", R"({"model": {"kind": "mlp", "layers": 8,
            "hidden": 1024}, "mesh": {"pp": 2}, "batch": {"global": 2048, "micro": 512},
            "schedule": "interleaved", "virtual_stages": 2, "cluster": {"gpu": "h100-sxm"}})"}}) {
    SCOPED_TRACE(name);
    const fs::path cfg = dir / (std::string(name) + ".json");
    std::ofstream(cfg) << config;
    double step[2] = {0, 0};
    std::string program[2];
    for (int comms = 0; comms < 2; ++comms) {
      const fs::path csv =
          kTorch / (std::string(name) + (comms ? ".compute_comms.csv" : ".compute_only.csv"));
      const fs::path out = dir / (comms ? "comms.sched" : "only.sched");
      const Result r =
          shell(kBin + " simulate --json --config " + cfg.string() + " --schedule-file " +
                csv.string() + " --schedule-out " + out.string());
      ASSERT_EQ(r.status, 0) << r.err;
      step[comms] = nlohmann::json::parse(r.out).at("step_time_s").get<double>();
      program[comms] = programs(out);
    }
    EXPECT_GT(step[0], 0);
    EXPECT_DOUBLE_EQ(step[1], step[0]);
    EXPECT_EQ(program[1], program[0]);
    // run executes it in that order too, equal to one device.
    const fs::path ran = dir / "ran.sched";
    const Result r = shell(kBin +
                           " run --backend cpu --steps 1 --layers 16 --hidden 32 "
                           "--schedule-file " +
                           (kTorch / (std::string(name) + ".compute_comms.csv")).string() +
                           " --dump-schedule " + ran.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("equal ("), std::string::npos) << r.out;
    EXPECT_EQ(programs(ran), program[0]);
  }
}

// Options that shape a generated schedule, or the output of one, given where they would be
// ignored (converting a file, or listing the families), and validate's --quiet beside an output it
// asks for, are refused, not dropped.
// The readers go by the name: torch's CSV written to a .sched file (or text to a .csv) was written
// with exit 0 and then refused by validate ("unknown keyword '0F0,0F1,0B0,0B1'"). Refused at the
// command line, as an unknown family or format is (they exited 1).
TEST(SchedulesCli, AnOutputNamedForTheOtherFormIsRefused) {
  const fs::path dir = temp_dir("schedules_names");
  for (const auto& [args, said] :
       {std::pair{"--format torch-csv -o " + (dir / "t.sched").string(),
                  "a .sched file is read as schedule text, but --format torch-csv writes "
                  "torch's CSV: name it .csv, or give --format text"},
        std::pair{"-o " + (dir / "t.csv").string(),
                  "a .csv file is read as torch's CSV, but --format text writes schedule "
                  "text: name it .sched, or give --format torch-csv"},
        std::pair{std::string("--format bogus"), "unknown --format 'bogus'"}}) {
    const Result r = shell(kBin + " schedules --dump 1f1b --pp 2 -m 2 " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "t.sched"));
  EXPECT_FALSE(fs::exists(dir / "t.csv"));
  const Result family = shell(kBin + " schedules --dump nosuch");
  EXPECT_EQ(family.status, 2);
  EXPECT_NE(family.err.find("unknown schedule family 'nosuch'"), std::string::npos) << family.err;
  // The form the name says is written.
  EXPECT_EQ(shell(kBin + " schedules --dump 1f1b --pp 2 -m 2 --format torch-csv -o " +
                  (dir / "t.csv").string())
                .status,
            0);
  EXPECT_EQ(shell(kBin + " validate " + (dir / "t.csv").string()).status, 0);
}

// A dump past the 64 MiB a schedule file may have was written (pp 1048576: 138 MB, after 68 s)
// and then refused by validate. Refused before writing (this one: 67.9 MiB of text).
TEST(SchedulesCli, ADumpLargerThanAScheduleFileMayBeIsRefused) {
  const fs::path out = temp_dir("schedules_huge") / "huge.sched";
  const Result r = shell(kBin + " schedules --dump 1f1b --pp 2048 -m 400 -o " + out.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("MiB as schedule text, more than the 64.0 MiB a schedule file may have"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(SchedulesCli, OptionsThatWouldBeIgnoredAreRefused) {
  const std::string csv = (kTorch / "zb-v_pp4_m8_v2.compute_only.csv").string();
  Result r = shell(kBin + " schedules --from " + csv + " --pp 8");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--pp requires --dump"), std::string::npos) << r.err;
  r = shell(kBin + " schedules --dp 4");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--dp requires --dump"), std::string::npos) << r.err;
  r = shell(kBin + " schedules --format torch-csv");
  EXPECT_EQ(r.status, 2);  // refused as the parser refuses --pp without --dump
  r = shell(kBin + " schedules --grid");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("apply to a schedule: give --dump FAMILY, --from FILE or --from-trace DIR"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  r = shell(kBin + " schedules --dump gpipe --pp 2 --dp 2 --grid");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rank 3"), std::string::npos) << r.out;
  // An empty family (an unset shell variable) is no request for the list.
  r = shell(kBin + " schedules --dump ''");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--dump needs a family name"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  // --torch-format: checked whatever --format is, and only with a torch CSV to shape; torch's
  // pipeline_order only for a schedule that holds its REDUCE_GRAD cells (it was compute_only).
  r = shell(kBin + " schedules --dump 1f1b --pp 2 --torch-format foo");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown --torch-format 'foo'"), std::string::npos) << r.err;
  r = shell(kBin + " schedules --dump 1f1b --pp 2 --torch-format compute_only");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("it goes with --format torch-csv"), std::string::npos) << r.err;
  r = shell(kBin +
            " schedules --dump gpipe --pp 2 -m 4 --format torch-csv --torch-format "
            "pipeline_order");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("needs the REDUCE_GRAD cells torch writes"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  const fs::path order = kTorch / "gpipe_pp2_m4_v1.pipeline_order.csv";
  r = shell(kBin + " schedules --from " + order.string() +
            " --format torch-csv --torch-format pipeline_order");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_file(order));
  // validate: quiet and an output asked for contradict each other.
  for (const std::string& output : {std::string("--grid"), "--diff " + csv}) {
    r = shell(kBin + " validate -q " + csv + " " + output);
    EXPECT_NE(r.status, 0) << output;
    EXPECT_NE(r.err.find("excludes --quiet"), std::string::npos) << output << ": " << r.err;
    EXPECT_EQ(r.out, "") << output;
  }
}

// torch 2.15's own pipeline_order of Schedule1F1B numbers the last rank's forwards 1..n: validate,
// run and simulate refuse it (its forward 0 never runs) and say why and what to do, where before
// they gave only "missing input". GPipe's pipeline_order, numbered from 0, validates.
TEST(SchedulesCli, TorchsOneFOneBOrderSaysItNumbersTheLastRanksForwardsFromOne) {
  for (const auto& [name, rank, last] : {std::tuple{"1f1b_pp2_m4_v1.pipeline_order.csv", 1, 4},
                                         std::tuple{"1f1b_pp3_m5_v1.pipeline_order.csv", 2, 5},
                                         std::tuple{"1f1b_pp4_m8_v1.pipeline_order.csv", 3, 8}}) {
    SCOPED_TRACE(name);
    const std::string file = (kTorch / name).string();
    const std::string said =
        "rank " + std::to_string(rank) + "'s forwards are numbered 1.." + std::to_string(last) +
        " and its backwards 0.." + std::to_string(last - 1) +
        ", as torch 2.15's Schedule1F1B.pipeline_order numbers the last rank's";
    for (const std::string& command : {"validate " + file, "run --schedule-file " + file}) {
      const Result r = shell(kBin + " " + command);
      EXPECT_EQ(r.status, 1) << command;
      EXPECT_NE(r.err.find(said), std::string::npos) << command << ": " << r.err;
    }
  }
  const Result gpipe =
      shell(kBin + " validate " + (kTorch / "gpipe_pp3_m5_v1.pipeline_order.csv").string());
  EXPECT_EQ(gpipe.status, 0) << gpipe.err;
  EXPECT_EQ(gpipe.err.find("numbered"), std::string::npos) << gpipe.err;
}

}  // namespace
}  // namespace meshscope::cli_testing
