// Files and folders a test process writes under the temporary directory, removed when the process
// exits: each ctest entry is a process of its own, so a name made unique by the process id is
// left behind by every run unless removed (1.4 GB of such folders once gathered in the development
// machine's /tmp over some 640 runs, and about 1,360 such files by stop 56).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace meshscope::testing {

inline void remove_at_exit(const std::filesystem::path& path) {
  struct Registry {
    std::mutex mutex;
    std::vector<std::filesystem::path> paths;
    ~Registry() {
      std::error_code ec;
      for (const auto& p : paths) std::filesystem::remove_all(p, ec);
    }
  };
  static Registry registry;
  std::lock_guard lock(registry.mutex);
  registry.paths.push_back(path);
}

// A path under the temporary directory unique to this process ("meshscope_<pid>_NAME"), removed
// when it exits. ctest runs test processes side by side: a shared name ("gemm_rates.csv" in
// TempDir) was written by one while another read it, and every run left it behind.
inline std::filesystem::path process_temp_path(const std::string& name) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("meshscope_" + std::to_string(::getpid()) + "_" + name);
  remove_at_exit(p);
  return p;
}

}  // namespace meshscope::testing
