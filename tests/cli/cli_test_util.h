// Helpers of the CLI tests: run a shell command capturing its exit status, stdout and stderr; a
// fresh temporary folder per test process; read a whole file.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/remove_at_exit.h"

namespace meshscope::cli_testing {

namespace fs = std::filesystem;

struct Result {
  int status = -1;  // exit status; -1 when the command did not exit normally
  std::string out;
  std::string err;
};

// A fresh folder under the temporary directory, unique to `name` and this process, removed when
// the process exits.
inline fs::path temp_dir(const std::string& name) {
  const fs::path dir = ::meshscope::testing::process_temp_path("cli_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `command` in /bin/sh with stderr captured to a file.
inline Result shell(const std::string& command) {
  static int counter = 0;
  const fs::path err =
      fs::temp_directory_path() /
      ("meshscope_cli_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  Result r;
  FILE* pipe = ::popen((command + " 2>" + err.string()).c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err);
  fs::remove(err);
  return r;
}

}  // namespace meshscope::cli_testing
