// Input files: a FIFO nobody writes to is refused within its wait instead of blocking open() for
// ever, one a process writes to is read whole; devices are read within the bound; a loop of
// symbolic links is named as one.
#include "traces/input_file.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/remove_at_exit.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("meshscope_input_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  testing::remove_at_exit(dir);
  return dir;
}

TEST(InputFile, AFifoNobodyWritesToIsRefusedAfterItsWait) {
  const fs::path fifo = fresh_dir("lonely") / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string why;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(InputFile::open(fifo.string(), why, 0.3));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(why, "a FIFO that no process opened to write to in 0.3 s");
  EXPECT_GE(waited, 0.3);
  EXPECT_LT(waited, 5.0);  // bounded: before, open() blocked until a writer came
}

TEST(InputFile, AFifoAProcessWritesToIsReadWhole) {
  const fs::path fifo = fresh_dir("fed") / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text(200000, 'x');  // more than a pipe holds: the reader must block again
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // after the reader opened it
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    size_t done = 0;
    while (fd >= 0 && done < text.size()) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (fd >= 0) ::close(fd);
  });
  std::string why;
  std::optional<InputFile> in = InputFile::open(fifo.string(), why, 10);
  ASSERT_TRUE(in) << why;
  const std::optional<std::string> read = in->read_all(1 << 20, why, "too large");
  writer.join();
  ASSERT_TRUE(read) << why;
  EXPECT_EQ(*read, text);
}

// A writer that has the FIFO open but is slow to write (`<(sleep 63; cat x)`) is read however
// long it takes: only a FIFO with no writer at all is refused.
TEST(InputFile, ASlowWriterIsWaitedForAsLongAsItTakes) {
  const fs::path fifo = fresh_dir("slow") / "f";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);  // at once: the reader is opening it
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // longer than the wait below
    if (fd >= 0) {
      EXPECT_EQ(::write(fd, "mesh", 4), 4);
      ::close(fd);
    }
  });
  std::string why;
  std::optional<InputFile> in = InputFile::open(fifo.string(), why, 0.3);
  ASSERT_TRUE(in) << why;
  EXPECT_EQ(in->read_all(100, why, "too large"), std::string("mesh"));
  writer.join();
}

// A pipe with no name (`<(true)`, `cmd | meshscope ... /dev/stdin`) had its writer when it was
// made: read at once, an empty one as empty, never waited for as a FIFO with no writer is.
TEST(InputFile, APipeWithNoNameIsReadAtOnceEvenWhenEmpty) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  ::close(ends[1]);  // the writer wrote nothing and is gone
  std::string why;
  const auto start = std::chrono::steady_clock::now();
  std::optional<InputFile> in =
      InputFile::open("/proc/self/fd/" + std::to_string(ends[0]), why, 10);
  ASSERT_TRUE(in) << why;
  EXPECT_EQ(in->read_all(100, why, "too large"), std::string());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ::close(ends[0]);
}

TEST(InputFile, ADeviceIsReadWithinTheBound) {
  std::string why;
  std::optional<InputFile> zero = InputFile::open("/dev/zero", why);
  ASSERT_TRUE(zero) << why;
  EXPECT_FALSE(zero->read_all(1 << 20, why, "has more than 1 MiB"));
  EXPECT_EQ(why, "has more than 1 MiB");
  std::optional<InputFile> null = InputFile::open("/dev/null", why);
  ASSERT_TRUE(null) << why;
  EXPECT_EQ(null->read_all(1 << 20, why, "too large"), std::string());
}

TEST(InputFile, WhatCannotBeOpenedSaysWhy) {
  const fs::path dir = fresh_dir("why");
  std::string why;
  EXPECT_FALSE(InputFile::open(dir.string(), why));
  EXPECT_EQ(why, "is a directory");
  EXPECT_FALSE(InputFile::open((dir / "none").string(), why));
  EXPECT_EQ(why, "No such file or directory");
  EXPECT_EQ(why_missing((dir / "none").string()), "no such file or folder");
  fs::create_symlink(dir / "a", dir / "b");
  fs::create_symlink(dir / "b", dir / "a");
  EXPECT_FALSE(InputFile::open((dir / "a").string(), why));
  EXPECT_EQ(why, "Too many levels of symbolic links");
  EXPECT_EQ(why_missing((dir / "a").string()), "Too many levels of symbolic links");
}

}  // namespace
}  // namespace meshscope::traces
