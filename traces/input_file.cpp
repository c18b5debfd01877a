// Opening input files without blocking on a FIFO nobody writes to, reading them within a bound.
#include "traces/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>

#include "traces/number_text.h"

namespace meshscope::traces {
namespace {

// Waits until the FIFO has a writer: a read without blocking gives a byte (kept in `first`), or
// EAGAIN (a writer is there, its data not yet), where no writer gives 0 (end of file). A writer
// that is slow to write is waited for as long as it takes, as before; only a FIFO that no process
// has opened for writing is refused after `wait_s`.
bool wait_for_writer(int fd, const std::string& path, double wait_s, std::optional<char>& first,
                     std::string& why) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  constexpr int kTickMs = 100;
  constexpr int kSayAfterMs = 2000;  // assumption: a writer that is coming opens it in this time
  bool said = false;
  for (;;) {
    char byte = 0;
    const ssize_t n = ::read(fd, &byte, 1);
    if (n == 1) {
      first = byte;
      return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno != EINTR) {
      why = std::strerror(errno);
      return false;
    }
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (static_cast<double>(waited) >= wait_s * 1000) {
      why = "a FIFO that no process opened to write to in " + format_seconds(wait_s);
      return false;
    }
    if (!said && waited >= kSayAfterMs) {
      std::fprintf(stderr,
                   "meshscope: waiting for %s, a FIFO no process has opened to write to yet (at "
                   "most %s)\n",
                   path.c_str(), format_seconds(wait_s).c_str());
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs));
  }
}

// A pipe with no name (`<(cmd)`, a shell's `|` as /dev/stdin), which had its writer when it was
// made: read at once, an empty one (`<(true)`) as empty, not waited for as a FIFO would be.
bool anonymous_pipe(int fd) {
  char target[64] = {};
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  return n > 0 && std::string_view(target, static_cast<size_t>(n)).starts_with("pipe:");
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
  if (S_ISFIFO(st.st_mode) && !anonymous_pipe(fd) &&
      !wait_for_writer(fd, path, fifo_wait_s, file.first_, why))
    return std::nullopt;
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

InputFile::InputFile(InputFile&& other) noexcept : fd_(other.fd_), first_(other.first_) {
  other.fd_ = -1;
}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    first_ = other.first_;
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
  if (first_) text += *std::exchange(first_, std::nullopt);
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
  if (f == nullptr) return nullptr;
  fd_ = -1;
  // The byte the FIFO's probe read, given back to be read first (one byte of push-back is what
  // ungetc guarantees).
  if (first_ &&
      std::ungetc(static_cast<unsigned char>(*std::exchange(first_, std::nullopt)), f) == EOF) {
    std::fclose(f);
    return nullptr;
  }
  return f;
}

std::string why_missing(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 || errno == ENOENT) return "no such file or folder";
  return std::strerror(errno);
}

}  // namespace meshscope::traces
