// `meshscope analyze` on real foreign traces, end to end: --window hta, communication kernels
// beyond NCCL, and the analyses that need no meshscope annotations.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/hta";

struct Result {
  int exit_code = -1;
  std::string out;
};

Result analyze(const std::string& args) {
  const std::string cmd =
      std::string(MESHSCOPE_BINARY_DIR) + "/meshscope analyze " + args + " 2>/dev/null";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(AnalyzeForeignCli, WindowHtaJsonGivesHtaFiguresPerRank) {
  const Result r =
      analyze("--window hta --json " + (kFixtures / "a100_nccl_rank0_no_cpu_op.json.gz").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
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

TEST(AnalyzeForeignCli, DefaultWindowKeepsTheTimelineBreakdown) {
  const Result r = analyze("--json " + (kFixtures / "h800_deepseek_v3_rank0.json.gz").string());
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("window"), "default");
  EXPECT_TRUE(j.at("hta").at(0).contains("span_ns"));
}

TEST(AnalyzeForeignCli, WindowHtaRefusesAnUnknownWindow) {
  EXPECT_NE(analyze("--window bogus " + (kFixtures / "h800_deepseek_v3_rank0.json.gz").string())
                .exit_code,
            0);
}

}  // namespace
}  // namespace meshscope::traces
