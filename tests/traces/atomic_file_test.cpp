#include "traces/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), {}));
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("meshscope_atomic_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AtomicFileTest, CommitReplacesTheFileWhole) {
  const fs::path p = dir_ / "out.json";
  write_file_atomic(p, "old");
  AtomicFile f(p);
  f.write("new ");
  EXPECT_EQ(read(p), "old");           // nothing visible before commit
  f.write(std::string(3 << 20, 'x'));  // larger than the buffer
  f.commit();
  EXPECT_EQ(read(p), "new " + std::string(3 << 20, 'x'));
  EXPECT_EQ(entries(dir_), 1u);
  EXPECT_THROW(f.write("more"), std::logic_error);
}

TEST_F(AtomicFileTest, AbandonedWriteLeavesOldFileAndNoTemp) {
  const fs::path p = dir_ / "out.json";
  write_file_atomic(p, "old");
  {
    AtomicFile f(p);
    f.write("partial");
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_EQ(f.temp_path().parent_path(), dir_);  // same folder: rename stays atomic
  }
  EXPECT_EQ(read(p), "old");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(AtomicFileTest, WriteErrorThrowsAndLeavesOldFileIntact) {
  const fs::path p = dir_ / "out.json";
  write_file_atomic(p, "old contents");
  // A file-size limit makes write(2) fail with EFBIG part-way, like a full disk would.
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 1 << 20;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    AtomicFile f(p);
    for (int i = 0; i < 8; ++i) f.write(std::string(1 << 19, 'y'));
    f.commit();
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find(p.string()), std::string::npos) << message;
  EXPECT_EQ(read(p), "old contents");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(AtomicFileTest, UnwritableFolderThrowsNamingThePath) {
  for (const fs::path& p : {dir_ / "missing" / "out.json", fs::path("/proc/meshscope_out.json")}) {
    try {
      AtomicFile f(p);
      FAIL() << "expected an error for " << p;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
}

TEST_F(AtomicFileTest, TargetThatIsAFolderFailsAtCommitWithoutLeftovers) {
  const fs::path p = dir_ / "sub";
  fs::create_directories(p / "keep");
  AtomicFile f(p);
  f.write("data");
  EXPECT_THROW(f.commit(), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(p / "keep"));
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(AtomicFileTest, NewFileGetsOrdinaryModeAndReplacedFileKeepsItsMode) {
  const fs::path fresh = dir_ / "fresh";
  write_file_atomic(fresh, "a");
  const mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(fs::status(fresh).permissions(),
            static_cast<fs::perms>(0666 & ~mask));  // not mkstemp's 0600
  fs::permissions(fresh, static_cast<fs::perms>(0640));
  write_file_atomic(fresh, "b");
  EXPECT_EQ(fs::status(fresh).permissions(), static_cast<fs::perms>(0640));
}

}  // namespace
}  // namespace meshscope::traces
