// Opening the files meshscope reads (traces, schedules, configs, hardware files, calibrations):
// a regular file, a device such as /dev/stdin, or a pipe another process writes to (`<(cmd)`).
// open() of a FIFO that no process has opened for writing blocks until one does, for ever if none
// ever does; an InputFile opens it without blocking and waits at most kFifoWaitSeconds for a
// writer, saying so on stderr after a moment, then refuses it. A pipe with its writer (`<(cmd)`,
// `cmd | meshscope ... /dev/stdin`) is read as before, however slowly the writer writes.
// Failures carry the reason (strerror or the FIFO's), which each reader words into its own error
// with the path.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace meshscope::traces {

// Assumption: a FIFO that no process has opened for writing in a minute will not be; a writer
// started beside meshscope (`mkfifo f; producer > f & meshscope ... f`) opens it at once.
inline constexpr int kFifoWaitSeconds = 60;

class InputFile {
 public:
  // The open file, or nullopt with `why` set ("Permission denied", "is a directory", ...). A
  // FIFO's writer is waited for at most `fifo_wait_s` (kFifoWaitSeconds; a test passes less).
  static std::optional<InputFile> open(const std::string& path, std::string& why,
                                       double fifo_wait_s = kFifoWaitSeconds);
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The whole file, or nullopt with `why` set: a read error, or `too_large` where it has more
  // than `max_bytes` (a regular file by its size; anything else read at most one chunk past
  // them, so /dev/zero ends at once).
  std::optional<std::string> read_all(size_t max_bytes, std::string& why,
                                      const std::string& too_large);
  // The descriptor as a stdio stream, owned by the caller from now on (nullptr: fdopen failed).
  std::FILE* release_to_stdio();

 private:
  explicit InputFile(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::optional<char> first_;  // a FIFO's first byte, read while waiting for its writer
};

// Why `path` is not there to read: "no such file or folder", or stat's reason where it is
// another (a loop of symbolic links, a folder on the way that cannot be searched).
std::string why_missing(const std::string& path);

}  // namespace meshscope::traces
