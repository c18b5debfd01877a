// `meshscope analyze` end to end: a trace meshscope wrote, read back through the importers.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/traces/trace_fixtures.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class AnalyzeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per process and test: ctest runs the tests of this file in parallel, and other
    // build trees may run them at the same time.
    dir_ = fs::temp_directory_path() /
           ("meshscope_analyze_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result run(const std::string& args) {
    const fs::path out = dir_ / "stdout";
    const fs::path err = dir_ / "stderr";
    const std::string cmd = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope analyze " + args +
                            " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }

  fs::path gpipe_trace() {
    Timeline t = testing::gpipe(4, 8, 1000, 2000);
    add_idle_spans(t);
    t.sort_spans();
    const fs::path p = dir_ / "gpipe.json";
    write_chrome_trace(t, p);
    return p;
  }

  fs::path dir_;
};

TEST_F(AnalyzeCli, JsonReportsThePerDeviceBubbleFractions) {
  const Result r = run(gpipe_trace().string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double expected = 3.0 / (8 + 3);  // (p-1)/(m+p-1)
  EXPECT_DOUBLE_EQ(j.at("overall").at("bubble_fraction").get<double>(), expected);
  ASSERT_EQ(j.at("devices").size(), 4u);
  for (const auto& d : j.at("devices")) {
    EXPECT_DOUBLE_EQ(d.at("bubble_fraction").get<double>(), expected);
  }
  EXPECT_EQ(j.at("devices").at(2).at("bubbles").at("warmup_ns"), 2 * 1000);
}

TEST_F(AnalyzeCli, TablePrintsDevicesAndOverall) {
  const Result r = run(gpipe_trace().string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("overall bubble fraction: 27.3%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 3"), std::string::npos) << r.out;
}

TEST_F(AnalyzeCli, AnEmptyTraceIsAnErrorNotATableOfZeros) {
  // Nothing usable read: exit non-zero with one error line, as convert and the viewer do. Both
  // forms, as a file (whose first 16 bytes the reader gets alone: `{"traceEvents":[`), and events
  // that all lack "ph".
  for (const std::string text : {R"({"traceEvents":[]})", "[]", "{\"traceEvents\": [ ]}\n",
                                 R"({"traceEvents":[{"name":"a","ts":1,"dur":2}]})"}) {
    const fs::path p = dir_ / "empty.json";
    std::ofstream(p) << text;
    for (const std::string flags : {"", " --json"}) {
      const Result r = run(p.string() + flags);
      EXPECT_NE(r.exit_code, 0) << text << flags;
      EXPECT_EQ(r.out, "") << text << flags;
      const size_t at = r.err.find("empty.json: no usable spans");
      EXPECT_NE(at, std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("no usable spans", at + 30), std::string::npos) << r.err;  // once
    }
  }
}

TEST_F(AnalyzeCli, UnreadableOrMalformedFilesFailWithOneLine) {
  const Result missing = run((dir_ / "nope.json").string());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;

  const std::string text = slurp(gpipe_trace());
  const fs::path cut = dir_ / "cut.json";
  std::ofstream(cut) << text.substr(0, text.size() / 2);
  const Result truncated = run(cut.string());
  EXPECT_NE(truncated.exit_code, 0);
  EXPECT_NE(truncated.err.find("cut.json"), std::string::npos) << truncated.err;
  EXPECT_NE(truncated.err.find("byte"), std::string::npos) << truncated.err;
  EXPECT_EQ(std::count(truncated.err.begin(), truncated.err.end(), '\n'), 1) << truncated.err;
  EXPECT_TRUE(truncated.out.empty());
}

}  // namespace
}  // namespace meshscope::traces
