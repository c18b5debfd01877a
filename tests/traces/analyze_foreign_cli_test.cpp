// `meshscope analyze` on real foreign traces, end to end: --window hta, communication kernels
// beyond NCCL, and the analyses that need no meshscope annotations.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/traces/import_test_util.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/hta";

using cli_testing::Result;

Result analyze(const std::string& args) {
  return cli_testing::shell(std::string(MESHSCOPE_BINARY_DIR) + "/meshscope analyze " + args);
}

TEST(AnalyzeForeignCli, WindowHtaJsonGivesHtaFiguresPerRank) {
  const Result r =
      analyze("--window hta --json " + (kFixtures / "a100_nccl_rank0_no_cpu_op.json.gz").string());
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("window"), "hta");
  ASSERT_EQ(j.at("hta").size(), 1u);
  const auto& h = j["hta"][0];
  EXPECT_EQ(h.at("rank"), 0);
  EXPECT_TRUE(h.at("step_filter").get<bool>());
  EXPECT_TRUE(h.at("rounded_to_us").get<bool>());
  // HTA 0.5.0 on this file: idle 77.78 %, compute 17.26 %, overlap 14.31 % (docs/ACCURACY.md).
  EXPECT_NEAR(100 * h.at("idle_fraction").get<double>(), 77.78, 0.5);
  EXPECT_NEAR(100 * h.at("compute_fraction").get<double>(), 17.26, 0.5);
  EXPECT_NEAR(100 * h.at("comm_compute_overlap").get<double>(), 14.31, 0.5);
}

TEST(AnalyzeForeignCli, WindowHtaRefusesMeshscopesOwnTraceButReadsAConvertedKinetoOne) {
  // A run's trace holds every device in one file, which HTA would read as one rank (a negative
  // kernel wait); a Kineto trace converted by meshscope is still one rank's Kineto trace.
  const fs::path dir = cli_testing::temp_dir("hta_own");
  const std::string bin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope ";
  const fs::path own = dir / "run.json";
  ASSERT_EQ(cli_testing::shell(bin + "run --pp 2 -m 2 --layers 2 --hidden 16 --batch 4 " +
                               "--backend cpu --out " + own.string())
                .status,
            0);
  const Result r = analyze("--window hta " + own.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("this file meshscope wrote (source cpu) holds several ranks"),
            std::string::npos)
      << r.err;
  const fs::path converted = dir / "converted.json";
  ASSERT_EQ(cli_testing::shell(bin + "convert " +
                               (kFixtures / "a100_nccl_rank0_no_cpu_op.json.gz").string() + " -o " +
                               converted.string())
                .status,
            0);
  EXPECT_EQ(analyze("--window hta " + converted.string()).status, 0);
  // Two ranks' Kineto traces converted into one file: several ranks again.
  const fs::path both = dir / "both.json";
  ASSERT_EQ(
      cli_testing::shell(bin + "convert " +
                         (fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch/1F1B").string() +
                         " -o " + both.string())
          .status,
      0);
  const Result merged = analyze("--window hta " + both.string());
  EXPECT_EQ(merged.status, 1);
  EXPECT_NE(merged.err.find("(source kineto) holds several ranks"), std::string::npos)
      << merged.err;
}

// An Nsight Systems export of one GPU, converted, is one rank's trace though meshscope writes no
// distributedInfo for it (the trace names no rank): --window hta reads it as HTA 0.5.0 does, which
// on this file gives idle 529,566 µs of kernel time 529,949 µs (99.93%), compute 381 µs.
TEST(AnalyzeForeignCli, WindowHtaReadsAConvertedNsightExportOfOneGpu) {
  const fs::path dir = cli_testing::temp_dir("hta_nsys");
  testing::TempFile db(".sqlite", testing::read_gz(fs::path(MESHSCOPE_SOURCE_DIR) /
                                                   "tests/fixtures/nsys/h100_fuser_report1_"
                                                   "schema3.16.sqlite.gz"));
  const fs::path converted = dir / "h100.json";
  ASSERT_EQ(cli_testing::shell(std::string(MESHSCOPE_BINARY_DIR) + "/meshscope convert " +
                               db.path().string() + " -o " + converted.string())
                .status,
            0);
  const Result r = analyze("--window hta --json " + converted.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto h = nlohmann::json::parse(r.out).at("hta").at(0);
  EXPECT_NEAR(100 * h.at("idle_fraction").get<double>(), 99.93, 0.005);
  EXPECT_NEAR(100 * h.at("compute_fraction").get<double>(), 0.07, 0.005);
}

// The first rank's clock is the one the others are aligned to: it showed a "residual skew 0 ns
// (max 0 ns, 21 collectives)" and aligned_by_collectives true, though no rank matched any of them.
TEST(AnalyzeForeignCli, TheReferenceRanksClockIsNamedSoNotMatched) {
  const std::string folder = kFixtures.string() + " --rank-from file-order";
  const Result text = analyze(folder);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("offset 0 ns  the reference: the other ranks are aligned to it"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("residual skew 0 ns"), std::string::npos) << text.out;
  const Result json = analyze("--json " + folder);
  ASSERT_EQ(json.status, 0) << json.err;
  const auto first = nlohmann::json::parse(json.out).at("clocks").at(0);
  EXPECT_EQ(first.at("matched_collectives"), 0);
  EXPECT_FALSE(first.at("aligned_by_collectives").get<bool>());
  EXPECT_TRUE(first.at("residual_skew_ns").is_null());
}

TEST(AnalyzeForeignCli, DefaultWindowKeepsTheTimelineBreakdown) {
  const Result r = analyze("--json " + (kFixtures / "h800_deepseek_v3_rank0.json.gz").string());
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("window"), "default");
  EXPECT_TRUE(j.at("hta").at(0).contains("span_ns"));
}

TEST(AnalyzeForeignCli, HostOnlyTraceSaysSoInsteadOfAZeroBubble) {
  const fs::path f =
      fs::temp_directory_path() / ("meshscope_host_only_" + std::to_string(::getpid()) + ".json");
  {
    std::FILE* out = std::fopen(f.c_str(), "w");
    std::fputs(R"({"traceEvents":[{"ph":"X","cat":"mtia_ccp_events","name":"op","pid":1,)"
               R"("tid":2,"ts":1,"dur":4,"args":{"device":0}}]})",
               out);
    std::fclose(out);
  }
  const Result r = analyze(f.string());
  fs::remove(f);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("no GPU or accelerator activity"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("bubble fraction: 0.0%"), std::string::npos) << r.out;
}

TEST(AnalyzeForeignCli, RanksWithoutCollectivesAreNotAlignedRatherThanZeroSkew) {
  const fs::path dir =
      fs::temp_directory_path() / ("meshscope_no_coll_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"a.json", "b.json"}) {
    std::FILE* out = std::fopen((dir / name).c_str(), "w");
    std::fputs(R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,)"
               R"("ts":10,"dur":5,"args":{"device":0,"stream":7}}]})",
               out);
    std::fclose(out);
  }
  const Result r = analyze(dir.string());
  fs::remove_all(dir);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("not aligned by collectives (none matched)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("residual skew 0 ns"), std::string::npos) << r.out;
}

TEST(AnalyzeForeignCli, KernelsStragglersAndCriticalPathOnARealTrace) {
  const Result r = analyze("--json --kernels 3 --stragglers --critical-path " +
                           (kFixtures / "h800_deepseek_v3_rank0.json.gz").string());
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& k = j.at("kernels").at(0);
  EXPECT_EQ(k.at("top").size(), 3u);
  // The largest kernel of this trace is DeepEP's combine (8 of them; found with Python over the
  // raw JSON), communication now that DeepEP counts as such.
  EXPECT_NE(k["top"][0].at("name").get<std::string>().find("dpsk::ep::internode::combine"),
            std::string::npos);
  EXPECT_EQ(k["top"][0].at("class"), "communication");
  EXPECT_EQ(k["top"][0].at("count"), 8);
  EXPECT_EQ(j.at("stragglers").at("collectives"), 0);  // one rank: nothing to compare
  const auto& p = j.at("critical_path").at(0);
  int64_t sum = 0;
  for (const auto& [key, v] : p.at("by_kind").items()) sum += v.get<int64_t>();
  EXPECT_EQ(sum, p.at("length_ns").get<int64_t>());  // the charges add up to the path
  EXPECT_GT(p.at("length_ns").get<int64_t>(), 0);
}

TEST(AnalyzeForeignCli, EveryPercentageSaysOfWhat) {
  const Result r = analyze((kFixtures / "a100_nccl_rank0_no_cpu_op.json.gz").string());
  ASSERT_EQ(r.status, 0);
  for (const char* label : {"(mean per step)", "(idle % of the step windows × devices)",
                            "totals over 3 steps", "bubble = idle % of the step windows",
                            "= % of span", "= % of idle", "comm overlap = % of comm time"}) {
    EXPECT_NE(r.out.find(label), std::string::npos) << label << "\n" << r.out;
  }
}

TEST(AnalyzeForeignCli, WindowHtaRefusesAnUnknownWindow) {
  EXPECT_NE(
      analyze("--window bogus " + (kFixtures / "h800_deepseek_v3_rank0.json.gz").string()).status,
      0);
}

}  // namespace
}  // namespace meshscope::traces
