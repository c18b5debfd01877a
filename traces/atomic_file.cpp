// AtomicFile: temp file + fsync + rename, with the temp removed on every failure path.
#include "traces/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "traces/printable.h"
#include "traces/temp_files.h"

namespace meshscope::traces {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

[[noreturn]] void fail(std::string_view what, const std::filesystem::path& path, int err) {
  throw std::runtime_error(std::string(what) + " " + path.string() + ": " + std::strerror(err));
}

// The process umask, read without changing it (umask(2) can only set, and setting it races with
// other threads creating files).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  }
  return 022;
}

// mkstemp gives 0600; a new output file should get the mode an ordinary open() would give it, and
// a replaced file keeps its own.
mode_t mode_for(const std::filesystem::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  return 0666 & ~current_umask();
}

void fsync_folder(const std::filesystem::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename already happened; durability of the entry is best effort
  ::fsync(fd);
  ::close(fd);
}

std::filesystem::path folder_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

// What a non-regular file is, for the refusal.
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a regular file";
}

std::string quoted(const std::filesystem::path& p) {
  return "'" + printable(p.string(), 200) + "'";
}

// The refusals that need no temporary file: an empty path, a special file or a symbolic link as
// target (rename would replace the node itself: /dev/null would become a regular file), a
// missing folder, a kernel file system.
void check_target(const std::filesystem::path& target) {
  if (target.empty()) throw std::runtime_error("the output path is empty");
  if (!target.has_filename()) {
    throw std::runtime_error("cannot write " + quoted(target) + ": not a file path");
  }
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw std::runtime_error("refusing to write " + quoted(target) + ": it is " +
                             kind_of(st.st_mode) +
                             "; only regular files are replaced (give a file path)");
  }
  const std::filesystem::path folder = folder_of(target);
  if (::stat(folder.c_str(), &st) != 0) {
    const int err = errno;
    throw std::runtime_error("cannot write " + quoted(target) + ": folder " + quoted(folder) +
                             ": " + std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error("cannot write " + quoted(target) + ": " + quoted(folder) +
                             " is not a folder");
  }
  struct statfs fs {};
  constexpr long kProcMagic = 0x9fa0, kSysfsMagic = 0x62656572;
  if (::statfs(folder.c_str(), &fs) == 0 && (fs.f_type == kProcMagic || fs.f_type == kSysfsMagic)) {
    throw std::runtime_error("refusing to write " + quoted(target) + ": " + quoted(folder) +
                             " is a kernel file system (" +
                             (fs.f_type == kProcMagic ? "proc" : "sysfs") + "), not storage");
  }
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  check_target(target_);
  sweep_stale_temp_files(target_);
  const std::string name = temp_name_pattern(target_);
  temp_c_ = std::make_unique<char[]>(name.size() + 1);
  std::copy(name.begin(), name.end(), temp_c_.get());
  temp_c_[name.size()] = '\0';
  fd_ = make_remembered_temp_file(temp_c_.get(), O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    throw std::runtime_error("cannot write " + quoted(target_) +
                             ": cannot create a file in its folder: " + std::strerror(err));
  }
  temp_ = std::filesystem::path(temp_c_.get());
  if (::fchmod(fd_, mode_for(target_)) != 0) {
    const int err = errno;
    discard();
    fail("cannot set the mode of", temp_, err);
  }
  buffer_.reserve(kBufferBytes);
}

AtomicFile::~AtomicFile() { discard(); }

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : target_(std::move(other.target_)),
      temp_(std::move(other.temp_)),
      temp_c_(std::move(other.temp_c_)),
      fd_(std::exchange(other.fd_, -1)),
      buffer_(std::move(other.buffer_)),
      synced_(other.synced_) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    target_ = std::move(other.target_);
    temp_ = std::move(other.temp_);
    temp_c_ = std::move(other.temp_c_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
    synced_ = other.synced_;
  }
  return *this;
}

void AtomicFile::write(std::string_view data) {
  if (fd_ < 0) throw std::logic_error("AtomicFile: write to " + target_.string() + " after commit");
  synced_ = false;
  if (buffer_.size() + data.size() > kBufferBytes) flush_buffer();
  if (data.size() >= kBufferBytes) {
    write_all(data);  // large writes skip the copy into the buffer
    return;
  }
  buffer_.append(data);
}

void AtomicFile::flush_buffer() {
  write_all(buffer_);
  buffer_.clear();
}

void AtomicFile::write_all(std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      discard();
      fail("cannot write", target_, err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void AtomicFile::sync() {
  if (fd_ < 0) throw std::logic_error("AtomicFile: sync of " + target_.string() + " after commit");
  flush_buffer();
  if (::fsync(fd_) != 0) {
    const int err = errno;
    discard();
    fail("cannot sync", target_, err);
  }
  synced_ = true;
}

void AtomicFile::commit() {
  if (fd_ < 0) throw std::logic_error("AtomicFile: " + target_.string() + " committed twice");
  if (!synced_) sync();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int err = errno;
    remove_temp();
    fail("cannot write", target_, err);
  }
  // The target may have become a special file or a link while we wrote.
  struct stat st {};
  if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    remove_temp();
    throw std::runtime_error("refusing to write " + quoted(target_) + ": it is " +
                             kind_of(st.st_mode) + "; only regular files are replaced");
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    remove_temp();
    fail("cannot replace", target_, err);
  }
  forget_temp_file(temp_c_.get());
  fsync_folder(folder_of(target_));
}

void AtomicFile::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  remove_temp();
}

void AtomicFile::remove_temp() noexcept {
  ::unlink(temp_.c_str());
  if (temp_c_) forget_temp_file(temp_c_.get());
}

void check_output_path(const std::filesystem::path& target) { AtomicFile probe(target); }

void write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  AtomicFile out(path);
  out.write(contents);
  out.commit();
}

}  // namespace meshscope::traces
