// What the importer must not do silently: merge two files of one rank, let a rank without
// distributedInfo take a device number, or drop device work of a category it does not know.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

// A one-kernel Kineto file on GPU `gpu`, with distributedInfo.rank when rank >= 0.
std::string kineto(int rank, int gpu) {
  std::string s = "{";
  if (rank >= 0) s += R"("distributedInfo":{"rank":)" + std::to_string(rank) + "},";
  s += R"("traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":)" + std::to_string(gpu) +
       R"(,"tid":7,"ts":10,"dur":5,"args":{"device":)" + std::to_string(gpu) + R"(,"stream":7}}]})";
  return s;
}

class Folder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("meshscope_never_silent_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(Folder, TwoFilesOfOneRankAreRefusedNamingBoth) {
  write("a.json", kineto(0, 0));
  write("b.json", kineto(0, 0));
  const std::vector<fs::path> paths{dir_};
  try {
    load_traces(paths);
    FAIL() << "two files of rank 0 were merged";
  } catch (const ImportError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a.json"), std::string::npos) << what;
    EXPECT_NE(what.find("b.json"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 0"), std::string::npos) << what;
  }
}

TEST_F(Folder, RankFromFileOrderNumbersTheFiles) {
  write("a.json", kineto(0, 0));
  write("b.json", kineto(0, 0));
  ImportOptions options;
  options.rank_from_file_order = true;
  const std::vector<fs::path> paths{dir_};
  const Timeline t = load_traces(paths, options);
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].rank, 0);
  EXPECT_EQ(t.devices[1].rank, 1);
}

TEST_F(Folder, RanksWithoutDistributedInfoFollowTheFileOrderNotTheDevice) {
  write("a.json", kineto(-1, 5));  // GPU 5, no rank: the first file is rank 0
  write("b.json", kineto(-1, 5));
  ImportReport report;
  const std::vector<fs::path> paths{dir_};
  const Timeline t = load_traces(paths, {}, &report);
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].rank, 0);
  EXPECT_EQ(t.devices[1].rank, 1);
  EXPECT_EQ(report.clocks.at(1).matched_collectives, 0);  // nothing to align by
}

TEST(UnknownCategory, DeviceEventsOfAnUnknownCategoryAreWarnedAbout) {
  const std::string json =
      R"({"traceEvents":[{"ph":"X","cat":"mtia_ccp_events","name":"op","pid":1,"tid":2,"ts":1,"dur":4,"args":{"device":0,"stream":3}}]})";
  ImportReport report;
  load_trace_bytes(json, "mtia.json", {}, &report);
  EXPECT_EQ(report.count(ImportWarning::kUnknownDeviceCategory), 1u);
  const auto lines = report.lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("mtia_ccp_events"), std::string::npos) << lines[0];
}

TEST(UnknownCategory, HostEventsOfAnUnknownCategoryAreNotDeviceWork) {
  const std::string json =
      R"({"traceEvents":[{"ph":"X","cat":"my_app","name":"op","pid":1,"tid":2,"ts":1,"dur":4}]})";
  ImportReport report;
  load_trace_bytes(json, "app.json", {}, &report);
  EXPECT_EQ(report.count(ImportWarning::kUnknownDeviceCategory), 0u);
}

}  // namespace
}  // namespace meshscope::traces
