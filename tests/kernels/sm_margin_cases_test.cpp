// meshscope-kernel-check --sm-margin's files (kernels/cpu/sm_margin_cases.h), without a GPU: the
// cases it measures are the development rows' GEMMs, the file it reads and the CSV it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/sm_margin_cases.h"
#include "sim/cost/framework.h"
#include "sim/predict/config.h"
#include "tests/remove_at_exit.h"

namespace meshscope::kernels {
namespace {

const std::string kCases = std::string(MESHSCOPE_SOURCE_DIR) + "/scripts/sm_margin_cases.csv";

// The first config (by name) of sim/predict/configs whose name starts with `row` and a dash.
std::string config_of(const std::string& row) {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(std::string(MESHSCOPE_SOURCE_DIR) +
                                                           "/sim/predict/configs"))
    if (e.path().filename().string().rfind(row + "-", 0) == 0) paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths.empty() ? "" : paths.front();
}

// Each case is the forward GEMM of a row-parallel linear in a development row: its tokens,
// widths and userbuffers settings as that row's config (or its profile's defaults) gives them.
// (The suite keeps the name it had among the CUDA tests: scripts/sm_margin_cases.csv and
// docs/ACCURACY.md name this test.)
TEST(CudaSmMargin, CasesAreTheDevelopmentRowsGemms) {
  const std::vector<SmMarginCase> cases = read_sm_margin_cases(kCases);
  ASSERT_EQ(cases.size(), 10u);
  for (const SmMarginCase& c : cases) {
    SCOPED_TRACE(c.name);
    const size_t dot = c.name.find('.');
    ASSERT_NE(dot, std::string::npos);
    const std::string gemm = c.name.substr(dot + 1);
    const std::string path = config_of(c.name.substr(0, dot));
    ASSERT_FALSE(path.empty());
    const predict::PredictConfig cfg = predict::parse_config(predict::load_json_file(path), path);
    EXPECT_EQ(c.m, cfg.micro_batch * cfg.gpt.seq / cfg.cp);
    EXPECT_EQ(c.n, cfg.gpt.hidden);
    ASSERT_TRUE(gemm == "proj_fprop" || gemm == "fc2_fprop");
    EXPECT_EQ(c.k, (gemm == "proj_fprop" ? cfg.gpt.hidden : cfg.gpt.ffn) / cfg.mesh.tp);
    ASSERT_TRUE(cfg.tp_comm_overlap && cfg.sequence_parallel);
    const model::TpOverlapCfgs ub = cfg.tp_comm_overlap_cfg
                                        ? *cfg.tp_comm_overlap_cfg
                                        : *cost::find_framework(cfg.framework).tp_comm_overlap;
    const auto at = std::find(model::kTpOverlapGemms.begin(), model::kTpOverlapGemms.end(), gemm);
    const model::TpOverlapCfg& u = ub[static_cast<size_t>(at - model::kTpOverlapGemms.begin())];
    EXPECT_EQ(u.method, model::TpOverlapCfg::Method::kPipeline);
    EXPECT_EQ(c.num_sm, u.num_sm);
    EXPECT_EQ(c.num_splits, u.num_splits);
  }
}

TEST(CudaSmMargin, BadCaseFilesAreNamedByLine) {
  const auto expect_error = [](const std::string& text, const std::string& want) {
    const std::string path = meshscope::testing::process_temp_path("sm_margin_bad.csv").string();
    std::ofstream(path) << text;
    try {
      read_sm_margin_cases(path);
      ADD_FAILURE() << "read: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + want), std::string::npos) << e.what();
    }
  };
  expect_error("m,n,k\n", ":1: want a header starting 'name,m,n,k,num_sm,num_splits'");
  expect_error("name,m,n,k,num_sm,num_splits\n# a comment\nx,2048,12288,3072,0,4\n",
               ":3: want a name and m,n,k,num_sm,num_splits of 1 or more");
  expect_error("name,m,n,k,num_sm,num_splits\nx,2048,12288,3072,24,5\n",
               ":2: num_splits 5 does not divide n 12288");
  expect_error("name,m,n,k,num_sm,num_splits\n", ": no cases");
}

TEST(CudaSmMargin, WritesOneLinePerCaseWithEveryWay) {
  SmMarginTimes t;
  t.c = {"nemo-gpt3-175b.proj_fprop", 2048, 12288, 3072, 24, 4};
  t.sms = 132;
  t.whole = 1e-4;
  t.held_target = 1.25e-4;
  const std::string out = format_sm_margin({t});
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "name,m,n,k,num_sm,num_splits,sms,whole_s,whole_target_s,split_s,split_target_s,"
            "held_s,held_target_s");
  EXPECT_NE(out.find("\nnemo-gpt3-175b.proj_fprop,2048,12288,3072,24,4,132,1.000000e-04,"),
            std::string::npos);
  EXPECT_NE(out.find(",1.250000e-04\n"), std::string::npos);
}

}  // namespace
}  // namespace meshscope::kernels
