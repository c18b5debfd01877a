// `meshscope convert` output loads in HolisticTraceAnalysis 0.5 and gives the figures HTA gives on
// the source trace (scripts/hta_figures.py on both). Runs where a Python with HTA is found:
// $MESHSCOPE_HTA_PYTHON, else python3 on PATH when it imports hta; skips with a message elsewhere
// (CI has no HTA).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(MESHSCOPE_SOURCE_DIR);

using cli_testing::Result;

Result run(const std::string& cmd) { return cli_testing::shell(cmd); }

std::string hta_python() {
  if (const char* p = std::getenv("MESHSCOPE_HTA_PYTHON"); p != nullptr && *p != '\0') return p;
  if (run("python3 -c 'import hta' >/dev/null 2>&1").status == 0) return "python3";
  return "";
}

class ConvertHta : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvertHta, ConvertedTraceGivesHtasFiguresOfTheSource) {
  const std::string python = hta_python();
  if (python.empty()) {
    GTEST_SKIP() << "HolisticTraceAnalysis not installed (set MESHSCOPE_HTA_PYTHON to a Python "
                    "with HolisticTraceAnalysis==0.5.0 to run this)";
  }
  const fs::path source = kSource / "tests/fixtures" / GetParam();
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("meshscope_hta_" + std::to_string(rd()));
  fs::create_directories(dir);
  const fs::path converted = dir / "converted.json";
  const Result c = run(std::string(MESHSCOPE_BINARY_DIR) + "/meshscope convert " + source.string() +
                       " -o " + converted.string() + " 2>&1");
  ASSERT_EQ(c.status, 0) << c.out;
  const std::string script = (kSource / "scripts/hta_figures.py").string();
  // stdout only: HTA's own RuntimeWarnings (a NaN overlap where there is no NCCL kernel) go to
  // stderr, which the test leaves on the console.
  const Result a = run(python + " " + script + " " + source.string());
  const Result b = run(python + " " + script + " " + converted.string());
  fs::remove_all(dir);
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(b.status, 0) << "HTA could not load the converted trace:\n" << b.out;
  const auto x = nlohmann::json::parse(a.out);
  const auto y = nlohmann::json::parse(b.out);
  ASSERT_EQ(x.size(), y.size());
  for (size_t r = 0; r < x.size(); ++r) {
    EXPECT_EQ(x[r]["rank"], y[r]["rank"]);
    for (const char* k : {"idle_pctg", "compute_pctg", "non_compute_pctg"}) {
      EXPECT_NEAR(x[r][k].get<double>(), y[r][k].get<double>(), 0.01) << k;
    }
    for (const char* k : {"kernel_time_us", "idle_time_us", "compute_time_us"}) {
      EXPECT_NEAR(x[r][k].get<double>(), y[r][k].get<double>(),
                  1e-4 * std::max(1.0, x[r][k].get<double>()))
          << k;
    }
    if (x[r]["comm_comp_overlap_pctg"].is_number()) {
      ASSERT_TRUE(y[r]["comm_comp_overlap_pctg"].is_number());
      EXPECT_NEAR(x[r]["comm_comp_overlap_pctg"].get<double>(),
                  y[r]["comm_comp_overlap_pctg"].get<double>(), 0.01);
    }
    for (const char* k : {"host_wait", "kernel_wait", "other"}) {
      EXPECT_NEAR(x[r]["idle_split_us"][k].get<double>(), y[r]["idle_split_us"][k].get<double>(),
                  1e-4 * std::max(1.0, x[r]["idle_split_us"][k].get<double>()))
          << "idle " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ConvertHta,
                         ::testing::Values("hta/a100_nccl_rank0_no_cpu_op.json.gz",
                                           "hta/b200_vllm_tp8_rank0_no_python.json.gz",
                                           "hta/h800_deepseek_v3_rank0.json.gz",
                                           "kineto_2rank_a100_nccl_rank0.json.gz"));

}  // namespace
}  // namespace meshscope::traces
