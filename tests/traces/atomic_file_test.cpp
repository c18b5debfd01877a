#include "traces/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

// What `write` throws while files may grow to `limit` bytes (RLIMIT_FSIZE, SIGXFSZ ignored so that
// the write fails with EFBIG instead); "" when it throws nothing.
template <typename Write>
std::string error_under_file_size_limit(rlim_t limit, Write&& write) {
  rlimit saved{};
  if (getrlimit(RLIMIT_FSIZE, &saved) != 0) return "getrlimit failed";
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = limit;
  std::string message;
  if (setrlimit(RLIMIT_FSIZE, &limited) != 0) {
    message = "setrlimit failed";
  } else {
    try {
      write();
    } catch (const std::runtime_error& e) {
      message = e.what();
    }
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  return message;
}

TEST_F(AtomicFileTest, WriteErrorThrowsAndLeavesOldFileIntact) {
  const fs::path p = dir_ / "out.json";
  write_file_atomic(p, "old contents");
  // A file-size limit makes write(2) fail with EFBIG part-way, like a full disk would.
  const std::string message = error_under_file_size_limit(1 << 20, [&] {
    AtomicFile f(p);
    for (int i = 0; i < 8; ++i) f.write(std::string(1 << 19, 'y'));
    f.commit();
  });
  EXPECT_NE(message.find(p.string()), std::string::npos) << message;
  EXPECT_EQ(read(p), "old contents");
  EXPECT_EQ(entries(dir_), 1u);
}

// Files written together are each synced before any replaces its target: the second one's
// failure (a file-size limit here, a full disk in use) leaves the first's old contents too.
TEST_F(AtomicFileTest, FilesSyncedBeforeAnyCommitsFailTogether) {
  const fs::path small = dir_ / "table.csv", large = dir_ / "plot.svg";
  write_file_atomic(small, "old table");
  write_file_atomic(large, "old plot");
  const std::string message = error_under_file_size_limit(256 << 10, [&] {
    std::vector<AtomicFile> files;
    files.emplace_back(small).write("new table");
    // 512 KiB in pieces the 1 MiB buffer holds: nothing reaches the disk, nor fails, until sync.
    AtomicFile& plot = files.emplace_back(large);
    for (int i = 0; i < 8; ++i) plot.write(std::string(64 << 10, 'y'));
    for (AtomicFile& f : files) f.sync();
    for (AtomicFile& f : files) f.commit();
  });
  EXPECT_NE(message.find(large.string()), std::string::npos) << message;
  EXPECT_EQ(read(small), "old table");
  EXPECT_EQ(read(large), "old plot");
  EXPECT_EQ(entries(dir_), 2u);  // no temp left
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

TEST_F(AtomicFileTest, TargetThatIsAFolderIsRefusedWithoutLeftovers) {
  const fs::path p = dir_ / "sub";
  fs::create_directories(p / "keep");
  EXPECT_THROW(AtomicFile f(p), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(p / "keep"));
  EXPECT_EQ(entries(dir_), 1u);
}

// The message of the error an AtomicFile for `p` throws ("" when none).
std::string refusal(const fs::path& p) {
  try {
    AtomicFile f(p);
    f.write("data");
    f.commit();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(AtomicFileTest, SpecialFilesAndSymbolicLinksAreRefusedAndLeftAsTheyWere) {
  // rename(2) over them would replace the node itself: /dev/null would become a regular file.
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(refusal(fifo).find("it is a FIFO (named pipe); only regular files are replaced"),
            std::string::npos)
      << refusal(fifo);
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));

  const fs::path target = dir_ / "target.json", link = dir_ / "link.json";
  write_file_atomic(target, "target");
  fs::create_symlink(target, link);
  EXPECT_NE(refusal(link).find("it is a symbolic link"), std::string::npos) << refusal(link);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(target), "target");

  // A character device like /dev/null, made here so the real one is never at risk if this breaks
  // (mknod needs root; elsewhere the FIFO and the link stand for special files).
  const fs::path dev = dir_ / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    EXPECT_NE(refusal(dev).find("it is a character device"), std::string::npos) << refusal(dev);
    EXPECT_TRUE(fs::is_character_file(fs::symlink_status(dev)));
  }
  EXPECT_NE(refusal("/proc/version").find("kernel file system (proc)"), std::string::npos)
      << refusal("/proc/version");
  EXPECT_EQ(refusal(""), "the output path is empty");
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST_F(AtomicFileTest, CheckOutputPathFailsLikeTheWriteWouldAndTouchesNothing) {
  EXPECT_THROW(check_output_path(dir_ / "missing" / "x.json"), std::runtime_error);
  EXPECT_THROW(check_output_path(""), std::runtime_error);
  EXPECT_THROW(check_output_path(dir_), std::runtime_error);
  check_output_path(dir_ / "fine.json");
  EXPECT_EQ(entries(dir_), 0u);
  write_file_atomic(dir_ / "old.json", "old");
  check_output_path(dir_ / "old.json");
  EXPECT_EQ(read(dir_ / "old.json"), "old");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(AtomicFileTest, TheTempNameCarriesTheWritersPid) {
  AtomicFile f(dir_ / "out.json");
  const std::string prefix = ".out.json.tmp." + std::to_string(::getpid()) + ".";
  EXPECT_EQ(f.temp_path().filename().string().rfind(prefix, 0), 0u) << f.temp_path();
}

TEST_F(AtomicFileTest, SigtermOrSigintDuringAWriteRemovesTheTemp) {
  // SIGPIPE, SIGALRM and SIGUSR1 end a process too (a broken `-o - | head`, a timer, a stray
  // kill -USR1); SIGQUIT and SIGXFSZ are handled alike, left out here for the core file one writes.
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGALRM, SIGUSR1}) {
    const fs::path p = dir_ / "out.json";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      AtomicFile f(p);
      f.write(std::string(3 << 20, 'x'));
      ::raise(sig);
      ::_exit(0);  // not reached: the signal ends the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << "the signal still ends it";
    EXPECT_EQ(entries(dir_), 0u) << "signal " << sig << " left the temp file";
  }
}

// A pid that no process has now: a child that already exited and was reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

void touch(const fs::path& p, std::chrono::minutes age) {
  std::ofstream(p) << "leftover";
  fs::last_write_time(p, fs::file_time_type::clock::now() - age);
}

TEST_F(AtomicFileTest, LeftoversOfKilledWritersAreSweptOthersKept) {
  const std::string dead = std::to_string(dead_pid());
  const std::string alive = std::to_string(::getpid());
  const fs::path stale = dir_ / (".out.json.tmp." + dead + ".AAAAAA");
  const fs::path fresh = dir_ / (".out.json.tmp." + dead + ".BBBBBB");    // written just now
  const fs::path live = dir_ / (".out.json.tmp." + alive + ".CCCCCC");    // its writer runs
  const fs::path other = dir_ / (".other.json.tmp." + dead + ".DDDDDD");  // another target's
  const fs::path mine = dir_ / ".out.json.tmp.notapid";
  touch(stale, std::chrono::minutes(60));
  touch(fresh, std::chrono::minutes(0));
  touch(live, std::chrono::minutes(60));
  touch(other, std::chrono::minutes(60));
  touch(mine, std::chrono::minutes(60));
  write_file_atomic(dir_ / "out.json", "new");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_EQ(read(dir_ / "out.json"), "new");
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
