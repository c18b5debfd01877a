// Eager sends (MPI_Isend of a buffer the link keeps until the request completes), polled receives
// (MPI_Iprobe + MPI_Recv of whatever arrived), and a shutdown that never hangs on a message nobody
// will receive (an aborted run): unfinished sends are cancelled after a grace period, and a launch
// where some process stopped answering ends with MPI_Abort.
#include "profiler/runtime/mpi_entry.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <list>
#include <stdexcept>
#include <string>
#include <thread>

namespace meshscope::runtime::mpi {
namespace {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string(what) + ": " + mpi_error(code));
}

constexpr int kTag = 0;

class MpiLink final : public ProcessLink {
 public:
  MpiLink() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
      owns_mpi_ = true;
      if (provided < MPI_THREAD_SERIALIZED) {
        MPI_Finalize();
        throw std::runtime_error(
            "MPI offers no MPI_THREAD_SERIALIZED (a rank's thread and the "
            "driver thread both send)");
      }
    }
    // Errors come back as codes, so they become exceptions with MPI's text, not an abort.
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &index_);
    MPI_Comm_size(comm_, &size_);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, static_cast<size_t>(len));
    v = v.substr(0, v.find_first_of(",\n"));
    description_ = "MPI (" + v + "), " + std::to_string(size_) + " processes";
  }

  ~MpiLink() override {
    if (abandoned_) {
      // MPI_Finalize would wait for a process that is stopped or stuck; MPI_Abort has the launcher
      // end every process of the job (the stuck one included) and never returns.
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    // Give unfinished sends a moment to be received; then cancel them, so finalising never waits
    // for a receiver that stopped listening.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!pending_.empty() && std::chrono::steady_clock::now() < until) {
      reap();
      if (!pending_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (Pending& p : pending_) {
      MPI_Cancel(&p.request);
      MPI_Request_free(&p.request);
    }
    pending_.clear();
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int index() const override { return index_; }
  int size() const override { return size_; }
  std::string describe() const override { return description_; }
  void abandon() noexcept override { abandoned_ = true; }

  void post(int to, std::string bytes) override {
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      throw std::runtime_error("MPI link: a message of " + std::to_string(bytes.size()) +
                               " bytes to process " + std::to_string(to) +
                               " is over MPI's 2 GiB count limit");
    }
    reap();
    pending_.emplace_back();
    Pending& p = pending_.back();
    p.bytes = std::move(bytes);
    check(MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, to, kTag, comm_,
                    &p.request),
          "MPI_Isend");
  }

  std::optional<std::pair<int, std::string>> poll() override {
    reap();
    int flag = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kTag, comm_, &flag, &status), "MPI_Iprobe");
    if (!flag) return std::nullopt;
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    std::string bytes(static_cast<size_t>(count), '\0');
    check(
        MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, kTag, comm_, MPI_STATUS_IGNORE),
        "MPI_Recv");
    return std::make_pair(status.MPI_SOURCE, std::move(bytes));
  }

 private:
  struct Pending {
    std::string bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Drops the sends that completed.
  void reap() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? pending_.erase(it) : std::next(it);
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owns_mpi_ = false;
  bool abandoned_ = false;
  int index_ = 0;
  int size_ = 1;
  std::string description_;
  std::list<Pending> pending_;  // std::list: buffers must not move while MPI holds them
};

}  // namespace

std::unique_ptr<ProcessLink> make_mpi_link() { return std::make_unique<MpiLink>(); }

}  // namespace meshscope::runtime::mpi

extern "C" __attribute__((visibility("default"))) const meshscope::runtime::mpi::MpiLinkEntry*
meshscope_mpi_links() {
  static const meshscope::runtime::mpi::MpiLinkEntry entry{
      .make_mpi_link = meshscope::runtime::mpi::make_mpi_link};
  return &entry;
}
