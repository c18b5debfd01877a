// The subcommands of `meshscope`. Each add_*_command registers one subcommand on the app; its
// callback does the work and throws on failure (main turns that into a one-line error).
#pragma once

#include <stdexcept>
#include <string>

namespace CLI {
class App;
}

namespace meshscope::cli {

// A failure the user can fix (bad argument, unreadable file): printed without a stack of causes.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The command failed and another process of the same launch (process 0 of an mpirun) reports
// why: exit non-zero without printing it again.
struct FailedElsewhere : std::runtime_error {
  explicit FailedElsewhere(const std::string& message, int status = 1)
      : std::runtime_error(message), exit_status(status) {}
  int exit_status;  // 2 where the failure was a command line refused (that process's status)
};

// One line per subcommand; its source file is listed in cli/CMakeLists.txt.
void add_run_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_schedules_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_analyze_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_catalog_command(CLI::App& app);

// `run` under mpirun when this process could not parse its arguments: takes part in the exchanges
// the other processes' run() makes first (their arguments, then whether they were accepted), so
// process 0 prints the one error, naming another process's when only that one failed. Returns
// the exit status.
int end_run_parse_error_across_processes(const std::string& message);

}  // namespace meshscope::cli
