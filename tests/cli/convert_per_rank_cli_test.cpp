// `meshscope convert JOB --per-rank -o DIR`: a job as one file per rank, as HolisticTraceAnalysis
// reads one (its TraceAnalysis(trace_dir=DIR) took a meshscope file of several devices for one
// rank). Each file holds its rank's devices with distributedInfo; read back as a folder, the job
// is the job.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const fs::path kJob = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch/1F1B";

nlohmann::json analysis_of(const fs::path& trace) {
  const Result r = shell(kBin + " analyze --json " + trace.string());
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

TEST(ConvertPerRank, EachRankIsAFileAndTheFolderIsTheJob) {
  const fs::path dir = temp_dir("convert_per_rank");
  fs::remove_all(dir);
  const Result r = shell(kBin + " convert " + kJob.string() + " --per-rank -o " + dir.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("4 ranks (rank<R>.json each)"), std::string::npos) << r.out;
  for (int rank = 0; rank < 4; ++rank) {
    const fs::path file = dir / ("rank" + std::to_string(rank) + ".json");
    ASSERT_TRUE(fs::exists(file)) << file;
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(file));
    EXPECT_EQ(j.at("distributedInfo").at("rank"), rank);
    EXPECT_EQ(j.at("distributedInfo").at("world_size"), 4);
    for (const nlohmann::json& e : j.at("traceEvents")) {
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
        EXPECT_EQ(e.at("args").at("rank"), rank) << e.dump();
      }
    }
  }
  // Every device's figures as the job's own.
  const nlohmann::json whole = analysis_of(kJob), parts = analysis_of(dir);
  ASSERT_EQ(parts.at("devices").size(), whole.at("devices").size());
  for (size_t d = 0; d < whole.at("devices").size(); ++d) {
    for (const char* key : {"compute_ns", "busy_ns", "idle_ns"}) {
      EXPECT_EQ(parts.at("devices").at(d).at(key), whole.at("devices").at(d).at(key)) << d << key;
    }
  }
  // Again into the same folder: its own files are replaced. A folder with another trace file is
  // refused (a tool reading the folder would take it for a rank), and so is stdout.
  EXPECT_EQ(shell(kBin + " convert " + kJob.string() + " --per-rank -o " + dir.string()).status, 0);
  fs::copy_file(kJob / "rank0.json.gz", dir / "rank7.json.gz");
  const Result other = shell(kBin + " convert " + kJob.string() + " --per-rank -o " + dir.string());
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.err.find("holds rank7.json.gz, which is no rank of this job's"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(shell(kBin + " convert " + kJob.string() + " --per-rank -o -").status, 2);
  // Without --per-rank, -o is a trace file, checked as before.
  EXPECT_EQ(shell(kBin + " convert " + kJob.string() + " -o " + dir.string()).status, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace meshscope::cli_testing
