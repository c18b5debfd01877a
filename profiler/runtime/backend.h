// A Backend is a set of ranks with their devices and transports: the cpu backend (one thread per
// rank) and, when built with MESHSCOPE_CUDA, cuda (one GPU per rank, NCCL) and cuda-virtual
// (N virtual devices on one GPU). make_backend() picks and builds one; the backends themselves are
// the rows of backend_table.h.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "profiler/runtime/backend_table.h"
#include "profiler/runtime/device_ops.h"
#include "profiler/runtime/process_messenger.h"
#include "profiler/runtime/transport.h"
#include "sim/mesh/mesh.h"

namespace meshscope::runtime {

#define MESHSCOPE_BACKEND_KIND(kind, name, maker, description) kind,
enum class BackendKind : uint8_t {
  kAuto = 0,
  MESHSCOPE_LINKED_BACKENDS(MESHSCOPE_BACKEND_KIND)
      MESHSCOPE_GPU_MODULE_BACKENDS(MESHSCOPE_BACKEND_KIND) kCount
};
#undef MESHSCOPE_BACKEND_KIND

// A row of backend_table.h, and `auto`'s (row 0).
struct BackendInfo {
  BackendKind kind = BackendKind::kAuto;
  std::string_view name;
  std::string_view description;
  bool in_gpu_module = false;  // made by libmeshscope-gpu.so, not linked in
};
#define MESHSCOPE_LINKED_BACKEND_INFO(kind, name, maker, description) \
  BackendInfo{BackendKind::kind, name, description, false},
#define MESHSCOPE_GPU_MODULE_BACKEND_INFO(kind, name, maker, description) \
  BackendInfo{BackendKind::kind, name, description, true},
inline constexpr std::array<BackendInfo, static_cast<size_t>(BackendKind::kCount)> kBackends = {
    BackendInfo{BackendKind::kAuto, "auto",
                "cuda when there is a GPU per rank, cuda-virtual when there is at least one GPU, "
                "else cpu",
                false},
    MESHSCOPE_LINKED_BACKENDS(MESHSCOPE_LINKED_BACKEND_INFO)
        MESHSCOPE_GPU_MODULE_BACKENDS(MESHSCOPE_GPU_MODULE_BACKEND_INFO)};
#undef MESHSCOPE_LINKED_BACKEND_INFO
#undef MESHSCOPE_GPU_MODULE_BACKEND_INFO

constexpr const BackendInfo& info(BackendKind k) { return kBackends[static_cast<size_t>(k)]; }
constexpr std::string_view name(BackendKind k) { return info(k).name; }
std::optional<BackendKind> parse_backend_kind(std::string_view s);
// Every backend's name, "auto, cpu, cuda, cuda-virtual", for messages and --help.
std::string backend_names();
// One line per backend, "  cpu: host threads, ...", for --help (no newline after the last).
std::string backend_descriptions();

struct BackendOptions {
  mesh::MeshShape mesh;         // world size = mesh.size(); groups come from mesh::Mesh
  int gpu = 0;                  // cuda-virtual: the physical GPU that holds the virtual devices
  bool green_contexts = true;   // cuda-virtual: split SMs with green contexts where allowed
  std::ostream* log = nullptr;  // where auto says once what it picked and why; null: silent
  // cpu: pin rank r's thread to the r-th CPU it may run on (only when there are at least as many
  // CPUs as ranks), so a rank woken by its peer never queues behind that peer on one core.
  bool pin_threads = false;
  // A multi-process launch (mpirun): this process runs the rank equal to its process index and
  // reaches the others through the messenger. Null: every rank runs in this process.
  ProcessMessenger* processes = nullptr;
};

// Contract:
// - Construction sets up every rank (devices, streams, communicators); it throws
//   std::runtime_error with the reason when that fails (no GPU, too few GPUs, NCCL init error).
// - Only ranks it hosts() have a thread in this process; device()/transport() of other ranks throw.
// - attach_thread(rank) is called once on each rank's host thread before its device() or
//   transport() is used (cuda: binds the device / green context to the thread).
// - device(rank) / transport(rank) stay valid for the backend's lifetime; each is used by its
//   rank's thread only (see device_ops.h and transport.h).
// - abort(reason) may be called from any thread (the watchdog), any number of times: it wakes
//   every blocked call on every rank, which then throws Aborted(first reason). It never blocks on
//   the ranks. After an abort the backend only needs to support destruction.
// - Destruction happens after every rank thread has stopped using it.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual BackendKind kind() const = 0;
  // One line for logs and trace metadata: "cpu (8 threads)", "cuda-virtual (4 green contexts on
  // NVIDIA H200)".
  virtual std::string description() const = 0;
  virtual const mesh::Mesh& mesh() const = 0;
  int world_size() const { return mesh().size(); }

  // The ranks whose host threads run in this process: all, except in a multi-process launch.
  virtual bool hosts(int rank) const {
    (void)rank;
    return true;
  }
  // The other processes of a multi-process launch; null when every rank runs in this process.
  virtual ProcessMessenger* processes() { return nullptr; }

  virtual void attach_thread(int rank) = 0;
  virtual DeviceOps& device(int rank) = 0;
  virtual Transport& transport(int rank) = 0;
  // Host waits for everything the rank issued (same as device(rank).synchronize()).
  virtual void synchronize(int rank) = 0;

  virtual void abort(const std::string& reason) noexcept = 0;
  virtual bool aborted() const noexcept = 0;
  // Whether it is doing work for ranks blocked in it right now (a group's sum, a copy of a
  // message: work_in_flight.h), which the watchdog counts as progress. Backends whose work runs
  // on devices the ranks wait for in their own actions need not say.
  virtual bool working() const noexcept { return false; }
};

// Resolves kAuto: cuda when there are at least as many GPUs as ranks, cuda-virtual when there is
// at least one GPU, otherwise cpu; writes one line saying what it picked and why to `log`.
// Other kinds are returned unchanged. Never throws.
BackendKind resolve_backend_kind(BackendKind requested, const mesh::MeshShape& mesh,
                                 std::ostream* log);
// Builds the backend (kAuto resolved first) through its row's maker. Throws std::runtime_error when
// the kind is not built in ("backend 'cuda' is not available: this build has no CUDA backend
// (configure with MESHSCOPE_CUDA=ON)") or cannot start.
std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& options);
// Whether this build contains the GPU module's backends (cuda and cuda-virtual).
bool cuda_backends_built();

// The makers of backend_table.h's rows, each defined by its backend's own .cpp (those of the GPU
// module's rows only there). make_backend() calls them with `kAuto` resolved; under mpirun
// (options.processes) after checking one rank per process.
#define MESHSCOPE_BACKEND_MAKER(kind, name, maker, description) \
  std::unique_ptr<Backend> maker(const BackendOptions& options);
MESHSCOPE_LINKED_BACKENDS(MESHSCOPE_BACKEND_MAKER)
MESHSCOPE_GPU_MODULE_BACKENDS(MESHSCOPE_BACKEND_MAKER)
#undef MESHSCOPE_BACKEND_MAKER

}  // namespace meshscope::runtime
