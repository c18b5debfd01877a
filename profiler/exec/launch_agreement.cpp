// A multi-process launch's agreement before its run: arguments, their checks, the schedule.
#include "profiler/exec/launch_agreement.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "profiler/runtime/clock.h"
#include "sim/schedule/schedule_text.h"
#include "traces/number_text.h"
#include "traces/printable.h"

namespace meshscope::exec {
namespace {

// A disagreement one of the exchanges found. Each process gets every process's contribution, so
// each finds the same one and ends with the same message and status.
struct Disagreement : std::runtime_error {
  Disagreement(const std::string& message, int status)
      : std::runtime_error(message), exit_status(status) {}
  int exit_status;
};

// A command line refused in a process (a process's own exit status 2): the others end with 2 too,
// whichever mpirun reports. Sent marked by a first byte no message starts with.
constexpr char kRefusedMark = '\x02';

// Every process of a run must take the same arguments (another seed or step count would make a
// run that differs from one device, or one whose processes wait for each other in vain).
void require_same_arguments(runtime::ProcessMessenger& processes, const std::string& arguments,
                            int64_t deadline_ns) {
  const std::vector<std::string> all =
      processes.exchange(arguments, "the arguments it was started with", deadline_ns);
  for (size_t p = 1; p < all.size(); ++p) {
    if (all[p] == all.front()) continue;
    const auto shown = [](std::string args) {
      if (!args.empty() && args.back() == '\0') args.pop_back();
      std::replace(args.begin(), args.end(), '\0', ' ');
      return traces::printable(args, 200);
    };
    throw Disagreement("process " + std::to_string(p) + " was started with other arguments (" +
                           shown(all[p]) + ") than process 0 (" + shown(all.front()) +
                           "): every process of a run takes the same arguments",
                       1);
  }
}

// Runs `checks` in every process. Under mpirun each process checks the same arguments, so each
// would print the same error: process 0's is the one said (another process's, with its number,
// should only that one fail), and every process ends with it.
void checked_by_every_process(runtime::ProcessMessenger& processes,
                              const std::function<void()>& checks, int64_t deadline_ns) {
  std::string failure;
  try {
    if (checks) checks();
  } catch (const CommandLineRefused& e) {
    failure = std::string(1, kRefusedMark) + e.what();
  } catch (const std::exception& e) {
    failure = *e.what() != '\0' ? e.what() : "failed";
  }
  const std::vector<std::string> all =
      processes.exchange(failure, "whether its arguments were accepted", deadline_ns);
  for (size_t p = 0; p < all.size(); ++p) {
    if (all[p].empty()) continue;
    const bool refused = all[p].starts_with(kRefusedMark);
    const std::string said = refused ? all[p].substr(1) : all[p];
    throw Disagreement(p == 0 ? said : "process " + std::to_string(p) + ": " + said,
                       refused ? 2 : 1);
  }
}

// Every process must run the same schedule: the same --schedule-file path may hold another file
// on another node. `summary` is this process's (schedule_summary()).
void require_same_schedule(runtime::ProcessMessenger& processes, const std::string& file,
                           const std::string& summary, int64_t deadline_ns) {
  const std::vector<std::string> all =
      processes.exchange(summary, "the schedule it read from --schedule-file", deadline_ns);
  for (size_t p = 1; p < all.size(); ++p) {
    if (all[p] == all.front()) continue;
    throw Disagreement("process " + std::to_string(p) + " read another schedule from '" + file +
                           "' (" + all[p] + ") than process 0 (" + all.front() +
                           "): every process of a run takes the same schedule; is the file "
                           "another on another node?",
                       1);
  }
}

}  // namespace

void agree_before_run(runtime::ProcessMessenger& processes, const LaunchAgreement& agreement,
                      const std::function<void(const std::string& error)>& say) {
  std::string error;
  int status = 1;
  const auto deadline = [&agreement] {
    return runtime::host_now_ns() + static_cast<int64_t>(std::min(agreement.timeout_s, 1e9) * 1e9);
  };
  bool silent_zero = false;  // process 0 is the one that did not answer: it cannot say so
  try {
    require_same_arguments(processes, agreement.arguments, deadline());
    checked_by_every_process(processes, agreement.checks, deadline());
    if (!agreement.schedule_file.empty() && agreement.schedule_summary) {
      require_same_schedule(processes, agreement.schedule_file, agreement.schedule_summary(),
                            deadline());
    }
    return;
  } catch (const runtime::PeerSilentError& e) {
    error = std::string(e.what()) + " within --timeout " +
            traces::format_seconds(agreement.timeout_s) +
            " before the run began: is it stopped (a debugger, SIGSTOP) or stuck (reading its "
            "--schedule-file)? Ending the launch";
    silent_zero = e.peer() == 0;
  } catch (const Disagreement& e) {
    error = e.what();
    status = e.exit_status;
  }
  if (processes.index() == 0 || (silent_zero && processes.index() == 1)) say(error);
  try {
    processes.exchange_after_abort("", "the other processes to stop",
                                   runtime::host_now_ns() + 5'000'000'000);
  } catch (const std::exception&) {
    // A process that never gets here is mpirun's to end.
  }
  throw LaunchRefused(error, status);
}

std::string arguments_of_this_process() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t first = all.find('\0');
  if (first == std::string::npos) return "";
  std::string out;
  for (size_t at = first + 1; at < all.size();) {
    size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    std::string argument = all.substr(at, end - at);
    const size_t equals = argument.find('=');
    if (argument.starts_with("--") && equals != std::string::npos) argument[equals] = '\0';
    out += argument + '\0';
    at = end + 1;
  }
  return out;
}

std::string schedule_summary(const schedule::Schedule& schedule) {
  const std::string text = schedule::dump(schedule);
  size_t actions = 0;
  for (const auto& rank : schedule.ranks) actions += rank.size();
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(text));
  return std::to_string(actions) + " actions, hash " + hash;
}

}  // namespace meshscope::exec
