// Writes an output file whole or not at all: a temp file in the target's folder, fsync, rename.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace meshscope::traces {

// A file being written. Readers of `target` see either its old contents or the complete new
// ones, never a prefix: data goes to a temporary file next to the target (same file system, so
// the rename is atomic), which commit() flushes, fsyncs and renames over the target. Destroying
// an uncommitted AtomicFile (an exception, an early return) removes the temporary and leaves the
// target untouched. Every failure throws std::runtime_error naming the path and the reason.
//
// Only regular files are replaced: a target that is a device node (/dev/null, /dev/full), a FIFO,
// a socket, a folder or a symbolic link is refused before anything is written, and so is one in a
// kernel file system (/proc, /sys). The temporary is ".NAME.tmp.PID.XXXXXX" (traces/temp_files.h):
// SIGINT, SIGTERM, SIGHUP and the other signals temp_files.h lists remove it, and creating an
// AtomicFile sweeps the leftovers of writers
// that were killed outright (kill -9) from the target's folder.
//
//   AtomicFile out("run.json");
//   out.write(header);
//   for (...) out.write(chunk);
//   out.commit();
class AtomicFile {
 public:
  // Creates the temporary file; throws when the folder is missing or not writable.
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;

  // Appends bytes (buffered). Throws on a write error (disk full, I/O error).
  void write(std::string_view data);
  // Writes out what is buffered and syncs it to disk, so that commit() has only the rename
  // left: a command writing several files syncs each before committing any, and a failure
  // (disk full) replaces none of them. Throws, discarding the temp file, on failure.
  void sync();
  // Makes the new contents visible under the target path (syncing first unless sync() did).
  // Call once; later writes throw.
  void commit();

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  void flush_buffer();
  void write_all(std::string_view data);
  void discard() noexcept;
  void remove_temp() noexcept;

  std::filesystem::path target_;
  std::filesystem::path temp_;
  // temp_ as a C string at a fixed address (it survives moves), for the signal-time cleanup.
  std::unique_ptr<char[]> temp_c_;
  int fd_ = -1;
  std::string buffer_;
  bool synced_ = false;  // sync() ran and nothing was written since
};

// Throws the error an AtomicFile for `target` would throw (an empty path, a missing or read-only
// folder, a target that is not a regular file), without touching the target: for checking an
// output path before a long run rather than after it. Creates and removes one temporary file.
void check_output_path(const std::filesystem::path& target);

// Writes `contents` to `path` through an AtomicFile.
void write_file_atomic(const std::filesystem::path& path, std::string_view contents);

}  // namespace meshscope::traces
