// What the processes of a multi-process launch (mpirun, one rank per process) agree on before the
// run begins: that each was started with the same arguments, that each accepted them, and that each
// read the same schedule. Without it, processes given another seed or step count would make a run
// that differs from one device, or wait for each other in vain; and each process, checking the
// same arguments, would print the same error. Here the first disagreement ends the launch in every
// process, said once (by process 0), with the exit status every process ends with.
//
// The messages name `meshscope run`'s options (--timeout, --schedule-file): they are what the
// user reads under mpirun (tests/cli/mpi_run_test.cpp pins them).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "profiler/runtime/process_messenger.h"
#include "sim/schedule/schedule.h"

namespace meshscope::exec {

// Thrown by a launch's checks for a command line refused (by the parser, or for options that do
// not go together): every process then ends with exit status 2, a refused command line's, not 1.
struct CommandLineRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The launch did not agree to run; thrown in every process by agree_before_run, after the one
// process that says so has said it (the caller prints nothing more).
struct LaunchRefused : std::runtime_error {
  LaunchRefused(const std::string& message, int status)
      : std::runtime_error(message), exit_status(status) {}
  int exit_status;  // 2 where a process refused its command line (CommandLineRefused), else 1
};

struct LaunchAgreement {
  // This process's arguments, NUL-separated (arguments_of_this_process()); every process's must be
  // the same as process 0's.
  std::string arguments;
  // Whether this process accepts its arguments: throws if not (CommandLineRefused for a command
  // line refused). Run in every process once the arguments agree.
  std::function<void()> checks;
  // How long each exchange waits for the other processes (--timeout): a process stopped or stuck
  // before the run (a debugger, a schedule file on a hung file system) had held the rest for ever,
  // as the run's watchdog starts only with the run.
  double timeout_s = 60;
  // Where given, every process's schedule_summary() (called after the checks) must be the same as
  // process 0's: the same --schedule-file path may hold another file on another node.
  std::string schedule_file;
  std::function<std::string()> schedule_summary;
};

// A launch's first exchanges, in every process: the arguments each was started with, then
// whether each accepted them, then (schedule_file given) the schedule each read. Returns when
// every process agreed. On a disagreement, or a process silent past the timeout, `say` gets the
// error in one process only: process 0, or process 1 when process 0 is the silent one. Another
// process's failure is said with its number ("process 2: ..."). Then every process waits briefly
// for the others to stop too, so that mpirun does not end process 0 before it printed, and throws
// LaunchRefused with that error. Failures of the messenger itself (an abort) pass through.
void agree_before_run(runtime::ProcessMessenger& processes, const LaunchAgreement& agreement,
                      const std::function<void(const std::string& error)>& say);

// This process's arguments after the program's path (/proc/self/cmdline), each followed by a NUL,
// each `--name=value` as `--name` and `value`: the same option to the parser, so a process given
// `--steps=2` agrees with one given `--steps 2`.
std::string arguments_of_this_process();

// What process 0 compares of each process's schedule: "N actions, hash H" (H: a hash of its
// text, schedule::dump), short enough to print both in the message that they differ.
std::string schedule_summary(const schedule::Schedule& schedule);

}  // namespace meshscope::exec
