// Signal-time removal and stale-leftover sweeping of AtomicFile's temporary files.
#include "traces/temp_files.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <mutex>
#include <string_view>

namespace meshscope::traces {
namespace {

// Slots hold pointers to paths owned by live AtomicFiles; lock-free so the handler may read them.
std::array<std::atomic<const char*>, kMaxTempFiles> g_temp_files{};

// The signals whose default action ends the process and that a user, a shell or a limit sends
// (not SIGKILL, which nothing catches, nor SIGABRT, SIGPROF or the real-time signals):
// Ctrl-C and Ctrl-\, kill, a closed terminal, a broken pipe (convert -o - | head), timers and
// the CPU and file-size limits (ulimit -t, -f; meshscope itself ignores SIGXFSZ, so that the
// write fails with its reason instead).
constexpr std::array<int, 11> kCleanupSignals = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
                                                 SIGPIPE, SIGALRM, SIGUSR1,  SIGUSR2,
                                                 SIGXCPU, SIGXFSZ, SIGVTALRM};

extern "C" void remove_temp_files_and_die(int sig) {
  for (auto& slot : g_temp_files) {
    const char* path = slot.load(std::memory_order_acquire);
    if (path != nullptr) ::unlink(path);
  }
  // End the process the way the signal would have (exit status, core policy, parent's view).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  for (int sig : kCleanupSignals) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    // A program (or a launcher that ignores SIGHUP) that chose its own disposition keeps it.
    if (current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO) != 0) continue;
    struct sigaction action {};
    action.sa_handler = remove_temp_files_and_die;
    sigemptyset(&action.sa_mask);
    for (int other : kCleanupSignals) sigaddset(&action.sa_mask, other);
    action.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &action, nullptr);
  }
}

void ensure_handlers() {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
}

bool process_exists(long pid) {
  if (pid <= 0) return true;  // not a pid we can judge: keep the file
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

// The pid of ".NAME.tmp.PID.XXXXXX" when `file` has that form for `prefix` (".NAME.tmp.").
long writer_pid(std::string_view file, std::string_view prefix) {
  if (file.substr(0, prefix.size()) != prefix) return -1;
  std::string_view rest = file.substr(prefix.size());
  const size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || rest.size() - dot - 1 != 6) return -1;
  long pid = 0;
  for (char c : rest.substr(0, dot)) {
    if (c < '0' || c > '9' || pid > 100'000'000) return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

std::filesystem::path folder_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

}  // namespace

std::string temp_name_pattern(const std::filesystem::path& target) {
  return (folder_of(target) /
          ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + ".XXXXXX"))
      .string();
}

void remember_temp_file(const char* path) {
  ensure_handlers();
  for (auto& slot : g_temp_files) {
    const char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, path, std::memory_order_acq_rel)) return;
  }
}

int make_remembered_temp_file(char* pattern, int flags) {
  ensure_handlers();
  sigset_t held, before;
  sigemptyset(&held);
  for (int sig : kCleanupSignals) sigaddset(&held, sig);
  ::pthread_sigmask(SIG_BLOCK, &held, &before);
  const int fd = ::mkostemp(pattern, flags);
  const int err = errno;
  if (fd >= 0) remember_temp_file(pattern);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);  // a signal held off arrives here
  errno = err;
  return fd;
}

void forget_temp_file(const char* path) {
  for (auto& slot : g_temp_files) {
    const char* expected = path;
    if (slot.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
  }
}

int sweep_stale_temp_files(const std::filesystem::path& target, std::chrono::seconds min_age) {
  const std::string prefix = "." + target.filename().string() + ".tmp.";
  int removed = 0;
  std::error_code ec;
  std::filesystem::directory_iterator it(folder_of(target), ec);
  if (ec) return 0;
  const std::time_t now = std::time(nullptr);
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    const long pid = writer_pid(name, prefix);
    if (pid < 0 || process_exists(pid)) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (now - st.st_mtime < min_age.count()) continue;
    if (::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace meshscope::traces
