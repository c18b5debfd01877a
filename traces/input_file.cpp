// Opening input files without blocking on a FIFO nobody writes to, reading them within a bound.
#include "traces/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace meshscope::traces {
namespace {

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// Waits for the FIFO's first byte (POLLIN) or for a writer that came and went (POLLHUP).
bool wait_for_writer(int fd, const std::string& path, double wait_s, std::string& why) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  constexpr int kTickMs = 200;
  constexpr int kSayAfterMs = 2000;  // assumption: a writer that is coming writes in this time
  bool said = false;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, kTickMs);
    if (n < 0 && errno != EINTR) {
      why = std::strerror(errno);
      return false;
    }
    if (n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) return true;
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (static_cast<double>(waited) >= wait_s * 1000) {
      why = "a FIFO that no process wrote to in " + format_seconds(wait_s);
      return false;
    }
    if (!said && waited >= kSayAfterMs) {
      std::fprintf(stderr,
                   "meshscope: waiting for %s, a FIFO no process has written to yet (at most "
                   "%s)\n",
                   path.c_str(), format_seconds(wait_s).c_str());
      said = true;
    }
  }
}

}  // namespace

std::optional<InputFile> InputFile::open(const std::string& path, std::string& why,
                                         double fifo_wait_s) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  InputFile file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    why = "is a directory";
    return std::nullopt;
  }
  if (S_ISFIFO(st.st_mode) && !wait_for_writer(fd, path, fifo_wait_s, why)) return std::nullopt;
  // Reads block again from here: a pipe's writer may pause between its writes.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  return file;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

InputFile::InputFile(InputFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::optional<std::string> InputFile::read_all(size_t max_bytes, std::string& why,
                                               const std::string& too_large) {
  std::string text;
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      why = too_large;
      return std::nullopt;
    }
    text.reserve(static_cast<size_t>(st.st_size));
  }
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      why = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) return text;
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      why = too_large;
      return std::nullopt;
    }
  }
}

std::FILE* InputFile::release_to_stdio() {
  std::FILE* f = ::fdopen(fd_, "rb");
  if (f != nullptr) fd_ = -1;
  return f;
}

std::string why_missing(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 || errno == ENOENT) return "no such file or folder";
  return std::strerror(errno);
}

}  // namespace meshscope::traces
