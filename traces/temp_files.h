// Temporary files of unfinished writes: removed when a signal ends the process (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, SIGPIPE and the other terminating signals a user, a shell or a limit sends,
// listed in temp_files.cpp), and swept when a killed process (kill -9) left them behind.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace meshscope::traces {

// The temporary name of a write to `target`: ".NAME.tmp.PID.XXXXXX" in the target's folder (the
// X's for mkstemp). The writer's pid in the name lets a later writer tell a leftover from a write
// in progress.
std::string temp_name_pattern(const std::filesystem::path& target);

// Remembers `path` (a C string that stays valid until forget_temp_file) as a temporary file to
// unlink if SIGINT, SIGTERM, SIGHUP or another terminating signal (above) ends the process. The
// first call installs the handler for each of those signals whose disposition is still the default;
// the handler unlinks every remembered file (async-signal-safe: unlink only) and then lets the
// signal end the process as it would have. At most kMaxTempFiles at once; more are simply not
// cleaned on a signal.
inline constexpr int kMaxTempFiles = 256;
void remember_temp_file(const char* path);
void forget_temp_file(const char* path);

// mkostemp(pattern, flags), the file remembered as above with those signals held off from before
// it exists until it is remembered: a signal in between (when the open returned) left it behind.
// Returns the descriptor, or -1 with errno set (nothing remembered).
int make_remembered_temp_file(char* pattern, int flags);

// A leftover is a temporary of `target` whose writer process no longer exists and that nobody has
// written for `min_age` (so a writer on another machine sharing the folder, with a pid unknown
// here, is not swept while it works). Removes them; returns how many were removed. Errors (an
// unreadable folder, a file removed meanwhile) are ignored: sweeping is best effort.
inline constexpr std::chrono::minutes kStaleTempAge{10};
int sweep_stale_temp_files(const std::filesystem::path& target,
                           std::chrono::seconds min_age = kStaleTempAge);

}  // namespace meshscope::traces
