// `meshscope schedules --from-trace` and `meshscope analyze` on the traces of real torch 2.15
// pipelining jobs (tests/fixtures/torch): the schedule recovered is torch's own CSV byte for byte,
// it validates, and every rank is analysed as a pipeline device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const fs::path kTorch = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch";
// The replay's largest error on the development set, as a fraction of the measured step.
constexpr double kDevelopmentTolerance = 0.02;

// The schedule recovered from `job` as torch's CSV is the CSV its runtime wrote, byte for byte.
void expect_recovers_its_compute_comms_csv(const fs::path& job) {
  const Result r = shell(kBin + " schedules --from-trace " + job.string() + " --format torch-csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_file(job / "schedule.compute_comms.csv"));
}

// `meshscope predict --from-trace JOB --json`'s report; null (and a failure recorded) when it
// fails.
nlohmann::json predict_from_trace(const fs::path& job) {
  const Result r = shell(kBin + " predict --from-trace " + job.string() + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

TEST(TorchTraceCli, RecoveredScheduleIsTorchsOwnCsv) {
  const fs::path dir = temp_dir("torch_from_trace");
  // Multi-stage schedules: what the runtime ran is its compute_comms CSV; GPipe: its
  // pipeline_order rows (compute and REDUCE_GRAD).
  for (const char* name : {"GPipe", "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble",
                           "ZBVZeroBubble", "DualPipeV"}) {
    SCOPED_TRACE(name);
    const fs::path job = kTorch / name;
    fs::path expected = job / "schedule.compute_comms.csv";
    if (!fs::exists(expected)) expected = job / "schedule.compute_only.csv";
    const fs::path out = dir / (std::string(name) + ".csv");
    const Result r = shell(kBin + " schedules --from-trace " + job.string() +
                           " --format torch-csv -o " + out.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(out), read_file(expected));
  }
}

// A job's folder with one rank's file swapped for another run's (GPipe's rank 1 among 1F1B's,
// same world and backend): the two runs were recorded 67 s apart. analyze says so; predict and
// schedules --from-trace refuse, naming the file (before, predict gave every alternative at
// -99.9% against a measured step of 67 s). No fixture job of one run trips it.
// A torch job on CPU ranks shows comm 0, and says why under its tables: gloo's send and recv
// ranges hold the wait for the peer (48 in the 1F1B job: 4 microbatches cross 3 links forward and
// back, 24 transfers of a send and a recv each). A GPU trace with no gloo says nothing of it.
TEST(TorchTraceCli, AnalyzeSaysWhyGloosSendsAndRecvsAreNotComm) {
  Result r = shell(kBin + " analyze " + (kTorch / "1F1B").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("note: the 48 gloo:send and gloo:recv ranges are not in comm"),
            std::string::npos)
      << r.out;
  r = shell(kBin + " analyze " + std::string(MESHSCOPE_SOURCE_DIR) +
            "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("gloo"), std::string::npos) << r.out;
}

TEST(TorchTraceCli, ARankFileOfAnotherRunIsNamed) {
  const fs::path job = temp_dir("torch_swapped_rank");
  for (const char* f : {"rank0.json.gz", "rank2.json.gz", "rank3.json.gz"})
    fs::copy_file(kTorch / "1F1B" / f, job / f);
  fs::copy_file(kTorch / "GPipe" / "rank1.json.gz", job / "rank1.json.gz");
  const std::string apart = "rank 1's steps (" + (job / "rank1.json.gz").string() + ") end ";
  for (const char* command : {"predict", "schedules"}) {
    const Result r = shell(kBin + " " + command + " --from-trace " + job.string());
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err.find(apart), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("give the files of one run"), std::string::npos) << r.err;
  }
  const Result analyzed = shell(kBin + " analyze " + job.string());
  EXPECT_EQ(analyzed.status, 0) << analyzed.err;
  EXPECT_NE(analyzed.err.find(apart), std::string::npos) << analyzed.err;
  for (const auto& entry : fs::directory_iterator(kTorch)) {
    if (!entry.is_directory()) continue;
    const Result r = shell(kBin + " analyze " + entry.path().string());
    EXPECT_EQ(r.err.find("overlap none of the first rank's"), std::string::npos)
        << entry.path() << r.err;
  }
}

// Recorded with with_stack: the actions are recovered as without it (GPipe's from its ranges,
// 1F1B's, which has none, from its ops), and the replay runs (it had stopped: "stage 0 has no
// measured compute", "no actions: every row is empty").
TEST(TorchTraceCli, AJobRecordedWithPythonFramesIsReadAsWithout) {
  const Result gpipe = shell(kBin + " schedules --from-trace " +
                             (kTorch / "GPipe_with_stack").string() + " --format torch-csv");
  ASSERT_EQ(gpipe.status, 0) << gpipe.err;
  EXPECT_EQ(gpipe.out, read_file(kTorch / "GPipe_with_stack" / "schedule.compute_only.csv"));
  // 1F1B: torch's IR numbers its last rank's forwards from 1 (Recovered1F1BIsWhatItsRuntimeRan).
  const Result one = shell(kBin + " schedules --from-trace " +
                           (kTorch / "1F1B_with_stack").string() + " --format torch-csv");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out.substr(0, one.out.find("\r\n")),
            "0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3,0REDUCE_GRAD,0WAIT_REDUCE_GRAD");
  for (const char* name : {"GPipe_with_stack", "1F1B_with_stack"}) {
    const nlohmann::json p = predict_from_trace(kTorch / name);
    ASSERT_FALSE(p.is_null()) << name;
    EXPECT_GT(p["measured_step_ns"].get<int64_t>(), 0) << name;
  }
}

// GPipe fills its pipeline one rank after another: each rank's warm-up (idle before its first
// compute) is longer than the rank's before it. Each "Forward i" allocates its receive buffer
// before its blocking c10d::recv_; read as the first compute, it had put rank 3's warm-up at
// 194 us against rank 0's 4.3 ms, and the fill into peer wait.
TEST(TorchTraceCli, GPipesWarmUpGrowsDownThePipeline) {
  const Result r = shell(kBin + " analyze --json " + (kTorch / "GPipe").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto a = nlohmann::json::parse(r.out);
  ASSERT_EQ(a["devices"].size(), 4u);
  int64_t before = -1;
  for (const auto& d : a["devices"]) {
    const int64_t warmup = d["bubbles"]["warmup_ns"].get<int64_t>();
    EXPECT_GT(warmup, before) << d["name"];
    before = warmup;
  }
}

TEST(TorchTraceCli, Recovered1F1BIsWhatItsRuntimeRan) {
  // torch 2.15's Schedule1F1B.pipeline_order numbers the last rank's forwards 1..n while its
  // runtime runs 0..n-1: the other rows are torch's, the last is the run's.
  const fs::path job = kTorch / "1F1B";
  const Result r = shell(kBin + " schedules --from-trace " + job.string() + " --format torch-csv");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string torch = read_file(job / "schedule.compute_only.csv");
  const size_t last_row = torch.rfind("\r\n", torch.size() - 3) + 2;
  EXPECT_EQ(r.out.substr(0, last_row), torch.substr(0, last_row));
  EXPECT_EQ(r.out.substr(last_row),
            "3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3REDUCE_GRAD,3WAIT_REDUCE_GRAD\r\n");
}

TEST(TorchTraceCli, RecoveredScheduleTextValidates) {
  const fs::path dir = temp_dir("torch_from_trace_text");
  for (const char* name : {"GPipe", "1F1B", "Interleaved1F1B", "ZBVZeroBubble", "DualPipeV"}) {
    SCOPED_TRACE(name);
    const fs::path sched = dir / (std::string(name) + ".sched");
    Result r = shell(kBin + " schedules --from-trace " + (kTorch / name).string() + " -o " +
                     sched.string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(read_file(sched).find("mesh dp=1 pp=4 tp=1"), std::string::npos);
    r = shell(kBin + " validate " + sched.string());
    EXPECT_EQ(r.status, 0) << r.out << r.err;
  }
}

TEST(TorchTraceCli, AnalyzeReportsEveryRankAsAPipelineDevice) {
  // The *_with_stack jobs were recorded with torch.profiler's with_stack: Python frames wrap every
  // op and the action ranges, and no op had counted as outermost (0 ns of compute, 100% bubble).
  for (const char* name : {"GPipe", "1F1B", "InterleavedZeroBubble", "DualPipeV",
                           "GPipe_with_stack", "1F1B_with_stack"}) {
    SCOPED_TRACE(name);
    const fs::path job = kTorch / name;
    const auto meta = nlohmann::json::parse(read_file(job / "job.meta"));
    const Result r = shell(kBin + " analyze --json " + job.string());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto a = nlohmann::json::parse(r.out);
    EXPECT_TRUE(a["has_stage_annotations"].get<bool>());
    ASSERT_EQ(a["devices"].size(), meta["pp"].get<size_t>());
    for (const auto& d : a["devices"]) {
      const int rank = d["rank"];
      EXPECT_EQ(d["name"], "rank " + std::to_string(rank) + " \u00b7 CPU");
      EXPECT_GT(d["compute_ns"].get<int64_t>(), 0);
      const auto& b = d["bubbles"];
      EXPECT_EQ(b["warmup_ns"].get<int64_t>() + b["peer_wait_ns"].get<int64_t>() +
                    b["other_ns"].get<int64_t>() + b["cooldown_ns"].get<int64_t>() +
                    b["unattributed_ns"].get<int64_t>(),
                d["idle_ns"].get<int64_t>());
      EXPECT_EQ(d["step_bubbles"].size(), a["windows"].size());
      // The stages torch placed on this rank, each with forward work of every microbatch.
      std::set<int> stages;
      for (const auto& [stage, owner] : meta["stage_to_rank"].items()) {
        if (owner.get<int>() == rank) stages.insert(std::stoi(stage));
      }
      std::set<int> seen;
      for (const auto& p : d["stage_phases"]) {
        if (p["phase"] != "forward") continue;
        seen.insert(p["stage"].get<int>());
        EXPECT_EQ(p["microbatches"], meta["microbatches"]);
      }
      EXPECT_EQ(seen, stages) << "rank " << rank;
    }
  }
}

TEST(TorchTraceCli, FromTraceNamesWhatIsMissing) {
  Result r = shell(kBin + " schedules --from-trace /nonexistent/torch/job");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/torch/job"), std::string::npos) << r.err;
  // A trace without pipeline actions: said so in one line, nothing written.
  const fs::path dir = temp_dir("torch_from_trace_none");
  std::ofstream(dir / "rank0.json")
      << R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,)"
      << R"("ts":1,"dur":5}]})";
  r = shell(kBin + " schedules --from-trace " + dir.string() + " --format torch-csv -o " +
            (dir / "x.csv").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no torch.distributed.pipelining actions"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.csv"));
  r = shell(kBin + " schedules --from-trace " + dir.string() + " --dump gpipe");
  EXPECT_NE(r.status, 0);
}

}  // namespace
}  // namespace meshscope::cli_testing

namespace meshscope::cli_testing {
namespace {

TEST(TorchTraceCli, PredictFromTraceReplaysTheRunThenAlternatives) {
  const fs::path job = kTorch / "Interleaved1F1B";
  const auto p = predict_from_trace(job);
  ASSERT_FALSE(p.is_null());
  Result r = shell(kBin + " analyze --json " + job.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto a = nlohmann::json::parse(r.out);
  EXPECT_EQ(p["measured_step_ns"], a["step_time_ns"]);
  EXPECT_EQ(p["pp"], 4);
  EXPECT_EQ(p["microbatches"], 4);
  ASSERT_GE(p["rows"].size(), 2u);
  // First the schedule that ran: torch's 8 stages, replayed; it cannot take less than the
  // busiest rank's measured compute.
  const auto& ran = p["rows"][0];
  EXPECT_EQ(ran["stages"], 8);
  int64_t busiest = 0;
  for (const auto& d : a["devices"]) busiest = std::max(busiest, d["compute_ns"].get<int64_t>());
  EXPECT_GE(ran["step_ns"].get<int64_t>(), busiest);
  bool gpipe = false;
  for (const auto& row : p["rows"]) gpipe = gpipe || row["schedule"] == "gpipe";
  EXPECT_TRUE(gpipe);
  // Only one alternative when asked for.
  r = shell(kBin + " predict --from-trace " + job.string() + " --schedule 1f1b --json");
  ASSERT_EQ(r.status, 0) << r.err;
  // the run, the run on the alternatives' mean costs, the one alternative
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"].size(), 3u);
  // --config and --from-trace are one or the other.
  r = shell(kBin + " predict --from-trace " + job.string() + " --config x.json");
  EXPECT_NE(r.status, 0);
}

TEST(TorchTraceCli, PredictFromTraceTakesTorchsNamesAndSaysWhichRunItMeasured) {
  const fs::path job = kTorch / "1F1B";
  // torch's class name, or the name its fixture folders use, is meshscope's family.
  for (const char* name : {"Schedule1F1B", "1F1B", "1f1b"}) {
    const Result r =
        shell(kBin + " predict --from-trace " + job.string() + " --schedule " + name + " --json");
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    const auto rows = nlohmann::json::parse(r.out)["rows"];
    ASSERT_EQ(rows.size(), 3u) << name;
    EXPECT_EQ(rows[2]["schedule"], "1f1b") << name;
  }
  Result r = shell(kBin + " predict --from-trace " + job.string() + " --schedule bogus");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("'bogus' is not a pipeline family the replay runs (one of gpipe, 1f1b"),
            std::string::npos)
      << r.err;
  for (const char* bad : {"--microbatches 0", "--pp -3", "--csv x.csv", "--plot x.svg"}) {
    r = shell(kBin + " predict --from-trace " + job.string() + " " + bad);
    EXPECT_NE(r.status, 0) << bad;
  }
  // Alternatives on other microbatches: the header still gives the run's, and says so.
  r = shell(kBin + " predict --from-trace " + job.string() + " --microbatches 8 --schedule zb-v");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("pp 4, 4 microbatches\nalternatives: pp 4, 8 microbatches"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a step of 8 microbatches does 2 times the work of the run's 4: each row's "
                       "\"vs measured\" below \"as run\" includes that"),
            std::string::npos)
      << r.out;
  r = shell(kBin + " predict --from-trace " + job.string() + " --microbatches 8 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto p = nlohmann::json::parse(r.out);
  EXPECT_EQ(p["microbatches"], 4);
  EXPECT_EQ(p["alternatives_microbatches"], 8);
}

TEST(TorchTraceCli, AJobWithRanksMissingIsRefusedNotReplayedShorter) {
  // Ranks 0 and 1 of a four-rank pipeline would replay as pp 2.
  const fs::path dir = temp_dir("torch_from_trace_part");
  for (const char* f : {"rank0.json.gz", "rank1.json.gz"})
    fs::copy_file(kTorch / "1F1B" / f, dir / f, fs::copy_options::overwrite_existing);
  for (const char* command : {" predict --from-trace ", " schedules --from-trace "}) {
    const Result r = shell(kBin + command + dir.string());
    EXPECT_NE(r.status, 0) << command;
    EXPECT_NE(r.err.find(dir.string() + ": no trace of ranks 2, 3, which the job's process groups"),
              std::string::npos)
        << r.err;
  }
  // analyze still shows what is there, but says what is not (it had shown a pp 2 job silently).
  const Result a = shell(kBin + " analyze " + dir.string());
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("meshscope: warning: no trace of ranks 2, 3, which the job's process "
                       "groups name beside the traced ranks: the figures are of the traced ranks "
                       "alone"),
            std::string::npos)
      << a.err;
  EXPECT_EQ(shell(kBin + " analyze " + (kTorch / "1F1B").string()).err.find("no trace of"),
            std::string::npos);
  // dp 2 x pp 2 with rank 0 and rank 2, the first stage of each replica: each pipeline lacks its
  // second rank (the dp group {0, 2} holds both traced ranks, but they ran the same stage).
  const fs::path dp = temp_dir("torch_from_trace_dp_part");
  for (const char* f : {"rank0.json.gz", "rank2.json.gz"})
    fs::copy_file(kTorch / "dp2_Interleaved1F1B" / f, dp / f, fs::copy_options::overwrite_existing);
  const Result r = shell(kBin + " predict --from-trace " + dp.string());
  EXPECT_NE(r.err.find(dp.string() + ": no trace of ranks 1, 3,"), std::string::npos) << r.err;
}

// A rank whose trace ends inside its step (the profiler stopped, the process died) holds only the
// actions before that: ZBV's rank 2 cut at 60% of its ProfilerStep#0 keeps 13 of its 24. Its
// schedule would leave microbatches short and replay their work at nothing (exit 0 before); it is
// refused, with each rank's count.
TEST(TorchTraceCli, ARankWhoseTraceEndsInsideItsStepIsRefused) {
  const fs::path dir = temp_dir("torch_from_trace_cut");
  for (const char* f : {"rank0.json.gz", "rank1.json.gz", "rank3.json.gz"})
    fs::copy_file(kTorch / "ZBVZeroBubble" / f, dir / f, fs::copy_options::overwrite_existing);
  const Result raw = shell("gzip -dc " + (kTorch / "ZBVZeroBubble" / "rank2.json.gz").string());
  ASSERT_EQ(raw.status, 0) << raw.err;
  nlohmann::json doc = nlohmann::json::parse(raw.out);
  double step_begin = -1, step_dur = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("name", "") == "ProfilerStep#0") {
      step_begin = e["ts"].get<double>();
      step_dur = e["dur"].get<double>();
    }
  }
  ASSERT_GT(step_begin, 0);
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& e : doc["traceEvents"]) {
    if (!e.contains("ts") || e["ts"].get<double>() <= step_begin + 0.6 * step_dur)
      kept.push_back(e);
  }
  doc["traceEvents"] = kept;
  std::ofstream(dir / "rank2.json") << doc.dump();
  for (const char* command : {" predict --from-trace ", " schedules --from-trace "}) {
    const Result r = shell(kBin + command + dir.string());
    EXPECT_NE(r.status, 0) << command << r.out;
    EXPECT_NE(r.err.find(": the schedule these traces hold is not a whole one (rank 2 "),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("compute actions by pipeline rank: 24, 24, 13, 24."), std::string::npos)
        << r.err;
  }
}

// The development set of the replay model (docs/ACCURACY.md, "Replaying an imported job"): the
// schedule that ran, replayed with each action's own measured work and host gap, lands within
// the tolerance it reaches on these fixtures; each term of the model comes from the trace, so
// leaving one out moves the replay.
TEST(TorchTraceCli, PredictFromTraceReplaysTheRunWithinItsTolerance) {
  for (const char* name : {"1F1B", "Interleaved1F1B", "LoopedBFS", "InterleavedZeroBubble",
                           "ZBVZeroBubble", "DualPipeV", "GPipe"}) {
    SCOPED_TRACE(name);
    const auto p = predict_from_trace(kTorch / name);
    ASSERT_FALSE(p.is_null());
    const double measured = p["measured_step_ns"].get<double>();
    const auto& ran = p["rows"][0];
    ASSERT_TRUE(ran.contains("step_ns")) << ran.dump();
    EXPECT_NEAR(ran["step_ns"].get<double>() / measured, 1.0, kDevelopmentTolerance);
    // Without the host gaps (python, dispatch, waiting for a peer's data) the replay is mostly
    // the ops' own time: far less than the step.
    EXPECT_LT(p["as_run_without_ns"]["host_gap"].get<double>(), 0.9 * ran["step_ns"].get<double>());
    // The time outside the pipeline is measured, so leaving it out shortens the replay by it.
    EXPECT_EQ(ran["step_ns"].get<int64_t>() - p["as_run_without_ns"]["edge"].get<int64_t>(),
              p["costs"]["edge_ns"].get<int64_t>());
    EXPECT_GT(p["costs"]["edge_ns"].get<int64_t>(), 0);
  }
}

// Two profiled steps, and ranks that start their second step before the slowest rank ends its
// first (the analysis windows are global, so such a rank's first actions of step 2 fall inside
// window 1): each rank's actions belong to its own ProfilerStep#N, and each step is replayed on
// its own costs. Counted by the global windows, the two steps' actions merged into one and the
// replay came out at +84% of the measured step.
TEST(TorchTraceCli, EachProfiledStepIsReplayedOnItsOwnCosts) {
  const fs::path job = kTorch / "InterleavedZeroBubble_2steps";
  expect_recovers_its_compute_comms_csv(job);
  const auto p = predict_from_trace(job);
  ASSERT_FALSE(p.is_null());
  const auto& ran = p["rows"][0];
  ASSERT_TRUE(ran.contains("step_ns")) << ran.dump();
  EXPECT_NEAR(ran["step_ns"].get<double>() / p["measured_step_ns"].get<double>(), 1.0,
              kDevelopmentTolerance);
  // Each window's edge is replayed with its window: leaving them out shortens the mean replay by
  // their mean (to the ns of the integer means).
  EXPECT_NEAR(ran["step_ns"].get<double>() - p["as_run_without_ns"]["edge"].get<double>(),
              p["costs"]["edge_ns"].get<double>(), 1.0);
}

// dp 2 x pp 2: each replica is its own pipeline (distributedInfo.pg_config); the schedule
// recovered is the first replica's, torch's own CSV, and its replay is that replica's.
TEST(TorchTraceCli, DataParallelJobIsReadAsItsPipelineGroups) {
  const fs::path job = kTorch / "dp2_Interleaved1F1B";
  expect_recovers_its_compute_comms_csv(job);
  const auto p = predict_from_trace(job);
  ASSERT_FALSE(p.is_null());
  EXPECT_EQ(p["pipeline_groups"], 2);
  EXPECT_EQ(p["replayed_ranks"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(p["pp"], 2);
  EXPECT_EQ(p["rows"][0]["stages"], 4);
  EXPECT_NEAR(p["rows"][0]["step_ns"].get<double>() / p["measured_step_ns"].get<double>(), 1.0,
              kDevelopmentTolerance);
  EXPECT_TRUE(p["first_rank_of_another_schedule"].is_null());
}

// The table of alternatives says what their figures rest on: the mean costs, whose own error
// against the run ("as run, mean costs") each row carries before any change of schedule.
TEST(TorchTraceCli, TheAlternativesSayTheyRestOnTheMeanCosts) {
  const Result r = shell(kBin + " predict --from-trace " + (kTorch / "1F1B").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json p = predict_from_trace(kTorch / "1F1B");
  ASSERT_FALSE(p.is_null());
  char said[64];
  std::snprintf(said, sizeof said, "\"as run, mean costs\" (%+.1f%%) is what the means",
                p["rows"][1]["vs_measured_percent"].get<double>());
  EXPECT_EQ(p["rows"][1]["schedule"], "as run, mean costs");
  EXPECT_NE(r.out.find(said), std::string::npos) << r.out;
}

// GPipe under dp 2, its dp groups listed first: the schedule recovered is the first replica's,
// torch's own CSV (it had been the dp group's, ranks 0 and 2 as stages 0 and 2). The schedule
// text, which describes one pipeline (mesh dp=1), says in a comment what the job was.
TEST(TorchTraceCli, ASingleStageReplicaIsRecoveredAsItsOwnPipeline) {
  const fs::path job = kTorch / "dp2_GPipe";
  const Result csv =
      shell(kBin + " schedules --from-trace " + job.string() + " --format torch-csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out, read_file(job / "schedule.compute_only.csv"));
  const std::string note =
      "the job ran 2 pipeline groups (dp 2); this is the first's (global ranks 0 1), which every "
      "group ran";
  EXPECT_NE(csv.err.find(note), std::string::npos) << csv.err;
  const Result text = shell(kBin + " schedules --from-trace " + job.string());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with("# meshscope schedule v1\n# " + note + "\n")) << text.out;
  const auto p = predict_from_trace(job);
  ASSERT_FALSE(p.is_null());
  EXPECT_EQ(p["replayed_ranks"], nlohmann::json::array({0, 1}));
  EXPECT_NEAR(p["rows"][0]["step_ns"].get<double>() / p["measured_step_ns"].get<double>(), 1.0,
              kDevelopmentTolerance);
}

// The second replica's traces alone are a whole pipeline (its process groups name ranks 2 and 3):
// it had been refused as "no trace of rank 0 (ranks 2..3 found)", the first replica's read.
TEST(TorchTraceCli, TheSecondReplicasTracesAloneAreItsPipeline) {
  for (const char* name : {"dp2_GPipe", "dp2_Interleaved1F1B"}) {
    const fs::path dir = temp_dir(std::string("torch_second_replica_") + name);
    for (const char* f : {"rank2.json.gz", "rank3.json.gz"})
      fs::copy_file(kTorch / name / f, dir / f, fs::copy_options::overwrite_existing);
    const Result csv =
        shell(kBin + " schedules --from-trace " + dir.string() + " --format torch-csv");
    ASSERT_EQ(csv.status, 0) << name << ": " << csv.err;
    // Every group ran the same schedule: the whole job's (its first group's) recovered schedule.
    const Result first =
        shell(kBin + " schedules --from-trace " + (kTorch / name).string() + " --format torch-csv");
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_EQ(csv.out, first.out) << name;
    const auto p = predict_from_trace(dir);
    ASSERT_FALSE(p.is_null()) << name;
    EXPECT_EQ(p["replayed_ranks"], nlohmann::json::array({2, 3})) << name;
  }
  // One rank's trace twice, compressed and not, is named as such: "one file per rank (or
  // --rank-from file-order ...)" had led to a job of every rank twice.
  const fs::path twice = temp_dir("torch_trace_twice");
  fs::copy_file(kTorch / "1F1B" / "rank0.json.gz", twice / "rank0.json.gz",
                fs::copy_options::overwrite_existing);
  ASSERT_EQ(shell("gzip -dc " + (kTorch / "1F1B" / "rank0.json.gz").string() + " > " +
                  (twice / "rank0.json").string())
                .status,
            0);
  const Result r = shell(kBin + " analyze " + twice.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("the same trace twice, once compressed? give one"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace meshscope::cli_testing

namespace meshscope::cli_testing {
namespace {

// `meshscope convert` of a torch job is a job `predict --from-trace` and `schedules --from-trace`
// read as the folder itself: the same schedule, the same replay; converting the converted file
// changes nothing. Before, reading the export back nested its ranks' keys ("rank 0.rank 2.
// pipeline_actions") and the job had no pipeline.
TEST(TorchTraceCli, AConvertedJobIsTheSameJob) {
  const fs::path dir = temp_dir("torch_converted");
  for (const char* name : {"Interleaved1F1B", "dp2_Interleaved1F1B", "dp2_GPipe"}) {
    SCOPED_TRACE(name);
    const fs::path job = kTorch / name;
    const fs::path once = dir / (std::string(name) + ".json");
    const fs::path twice = dir / (std::string(name) + ".again.json");
    ASSERT_EQ(shell(kBin + " convert " + job.string() + " -o " + once.string()).status, 0);
    ASSERT_EQ(shell(kBin + " convert " + once.string() + " -o " + twice.string()).status, 0);
    EXPECT_EQ(read_file(twice), read_file(once));

    const Result from_job =
        shell(kBin + " schedules --from-trace " + job.string() + " --format torch-csv");
    const Result from_file =
        shell(kBin + " schedules --from-trace " + once.string() + " --format torch-csv");
    ASSERT_EQ(from_file.status, 0) << from_file.err;
    EXPECT_EQ(from_file.out, from_job.out);

    const nlohmann::json a = predict_from_trace(job);
    const nlohmann::json b = predict_from_trace(once);
    ASSERT_FALSE(b.is_null());
    EXPECT_EQ(b["measured_step_ns"], a["measured_step_ns"]);
    EXPECT_EQ(b["rows"], a["rows"]);
  }
}

}  // namespace
}  // namespace meshscope::cli_testing
