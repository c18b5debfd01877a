// AtomicFile: temp file + fsync + rename, with the temp removed on every failure path.
#include "traces/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

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

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  if (target_.empty() || !target_.has_filename()) {
    throw std::runtime_error("cannot write '" + target_.string() + "': not a file path");
  }
  const std::filesystem::path pattern =
      folder_of(target_) / ("." + target_.filename().string() + ".tmp.XXXXXX");
  std::string name = pattern.string();
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot write", target_, errno);
  temp_ = std::filesystem::path(buf.data());
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
      fd_(std::exchange(other.fd_, -1)),
      buffer_(std::move(other.buffer_)),
      bytes_written_(other.bytes_written_) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    target_ = std::move(other.target_);
    temp_ = std::move(other.temp_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
    bytes_written_ = other.bytes_written_;
  }
  return *this;
}

void AtomicFile::write(std::string_view data) {
  if (fd_ < 0) throw std::logic_error("AtomicFile: write to " + target_.string() + " after commit");
  bytes_written_ += data.size();
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

void AtomicFile::commit() {
  if (fd_ < 0) throw std::logic_error("AtomicFile: " + target_.string() + " committed twice");
  flush_buffer();
  if (::fsync(fd_) != 0) {
    const int err = errno;
    discard();
    fail("cannot sync", target_, err);
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    fail("cannot write", target_, err);
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    fail("cannot replace", target_, err);
  }
  fsync_folder(folder_of(target_));
}

void AtomicFile::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
}

void write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  AtomicFile out(path);
  out.write(contents);
  out.commit();
}

}  // namespace meshscope::traces
