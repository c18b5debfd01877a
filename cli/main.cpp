// `meshscope`: the command-line front end. Thin: parses arguments and calls the libraries.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "cli/number_options.h"
#include "profiler/runtime/process_link.h"
#include "traces/host_memory.h"
#include "traces/printable.h"

namespace {

// What a command printed to stdout (a table, --json, a schedule) but did not reach it, a full disk
// under `> file` or a closed stdout, fails the command instead of leaving a cut file and exit 0.
int with_stdout_checked(int status) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return status;
  // The reason is gone with the write that failed unless this last flush failed too; a write of
  // nothing still tells a closed stdout.
  int err = errno;
  if (err == 0 && ::write(STDOUT_FILENO, "", 0) < 0) err = errno;
  std::fprintf(stderr, "meshscope: error: cannot write to standard output: %s\n",
               err != 0 ? std::strerror(err) : "a write to it failed (a full disk?)");
  return status == 0 ? 1 : status;
}

// What this process may allocate, as an out-of-memory error says it.
std::string memory_limit_text() {
  try {
    return meshscope::traces::memory_limit().source;
  } catch (const std::exception& e) {
    return e.what();
  }
}

// A refused command line's error text. CLI11 lists the arguments it did not expect last typed
// first (its detail::rjoin: `simulate -o x.json` gave "not expected: x.json -o", as if x.json were
// the option): listed here as they were typed.
std::string parse_error_text(const CLI::ParseError& e, const CLI::App& app) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return e.what();
  const std::vector<std::string> extras = app.remaining(true);
  if (extras.empty()) return e.what();
  std::string text = extras.size() > 1 ? "The following arguments were not expected:"
                                       : "The following argument was not expected:";
  for (const std::string& a : extras) text += " " + a;
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  // Beyond a file-size limit (ulimit -f) a write fails with EFBIG, which the writers report with
  // the file's name and clean up after, instead of SIGXFSZ ending the process without a word.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"meshscope: execute, capture, analyze and simulate parallel training schedules",
               "meshscope"};
  app.set_version_flag("--version", "meshscope 0.1.0");
  app.require_subcommand(1);
  // One line per subcommand, declared in cli/commands.h.
  meshscope::cli::add_run_command(app);
  meshscope::cli::add_demo_command(app);
  meshscope::cli::add_schedules_command(app);
  meshscope::cli::add_validate_command(app);
  meshscope::cli::add_analyze_command(app);
  meshscope::cli::add_simulate_command(app);
  meshscope::cli::add_predict_command(app);
  meshscope::cli::add_calibrate_command(app);
  meshscope::cli::add_convert_command(app);
  meshscope::cli::add_catalog_command(app);
  meshscope::cli::check_number_syntax(app);
  const int processes = meshscope::runtime::launched_process_count();
  if (processes > 1 && !(argc > 1 && std::strcmp(argv[1], "run") == 0)) {
    if (meshscope::runtime::launched_process_index() == 0)  // the same in every process
      std::fprintf(stderr,
                   "meshscope: error: started as one of %d processes (mpirun); only `meshscope "
                   "run` runs across processes\n",
                   processes);
    return 2;
  }
  std::string names;
  for (const CLI::App* c : app.get_subcommands({}))
    names += (names.empty() ? "" : ", ") + c->get_name();
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](CLI::App* c) { return c->check_name(argv[1]); }).empty()) {
    // CLI11 alone would say "A subcommand is required", which hides the typo.
    std::fprintf(stderr,
                 "meshscope: error: unknown command '%s'; the commands are: %s (see --help)\n",
                 meshscope::traces::printable(argv[1]).c_str(), names.c_str());
    return 2;
  }
  if (argc == 1) {  // CLI11's "A subcommand is required" named none of them
    std::fprintf(stderr, "meshscope: error: give a command: %s (see --help)\n", names.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Under mpirun (`run` alone gets here) the other processes meet this one in run()'s first
    // exchanges; process 0 says what is wrong, once. --help and --version are not failures.
    const std::string message = parse_error_text(e, app);
    if (processes > 1 && e.get_exit_code() != 0)
      return meshscope::cli::end_run_parse_error_across_processes(message);
    if (processes > 1 && meshscope::runtime::launched_process_index() != 0) {
      std::ostringstream quiet;  // every process prints the same help
      return app.exit(e, quiet, quiet);
    }
    if (e.get_exit_code() == 0) return with_stdout_checked(app.exit(e));  // --help, --version
    // A bad argument: one error line as every other, and the documented 2 (CLI11's own codes,
    // 105 to 109, and its bare text had been the only ones without "meshscope: error:").
    std::fprintf(stderr, "meshscope: error: %s\nRun with --help for more information.\n",
                 meshscope::traces::printable(message, 400).c_str());
    return with_stdout_checked(2);
  } catch (const meshscope::cli::FailedElsewhere& e) {
    return with_stdout_checked(e.exit_status);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "meshscope: error: out of memory: an allocation failed (%s)\n",
                 memory_limit_text().c_str());
    return with_stdout_checked(1);
  } catch (const std::system_error& e) {
    // A thread that could not start (EAGAIN): say which limit, not only the errno's text.
    const bool limit = e.code() == std::errc::resource_unavailable_try_again;
    std::fprintf(
        stderr, "meshscope: error: %s%s\n", e.what(),
        limit ? " (a limit on threads, ulimit -u, or on memory, ulimit -v, was reached)" : "");
    return with_stdout_checked(1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshscope: error: %s\n", e.what());
    return with_stdout_checked(1);
  }
  return with_stdout_checked(0);
}
