// The cpu backend across processes (`mpirun -np N meshscope run --backend cpu ...`): this process
// runs one rank (its process index) on host memory; transfers and collectives are messages
// through a ProcessMessenger. Collectives gather every member's buffer and combine them in group
// order, so all members get bitwise the same result, as the threaded cpu backend does.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "profiler/runtime/backend.h"
#include "profiler/runtime/cpu_device_ops.h"
#include "profiler/runtime/process_messenger.h"
#include "profiler/runtime/work_in_flight.h"
#include "traces/collective.h"

namespace meshscope::runtime {

class ProcessCpuTransport final : public Transport {
 public:
  ProcessCpuTransport(int rank, const mesh::Mesh& mesh, ProcessMessenger& messenger);

  int rank() const override { return rank_; }
  TransferInfo send(int peer, int64_t tag, const void* src, size_t bytes) override;
  TransferInfo recv(int peer, int64_t tag, void* dst, size_t bytes) override;
  std::string undelivered() const override;
  TransferInfo all_reduce(mesh::GroupKind group, float* data, size_t count) override;
  TransferInfo all_gather(mesh::GroupKind group, const float* src, float* dst,
                          size_t count) override;
  TransferInfo reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                              size_t count) override;
  TransferInfo all_to_all(mesh::GroupKind group, const float* src, float* dst,
                          size_t count) override;
  // Whether it is summing or copying a collective's gathered payloads now (work_in_flight.h).
  bool working() const noexcept { return work_.any(); }

 private:
  // Sends this member's `count_in` floats to the group, returns every member's, checked to be the
  // same op and count.
  std::vector<std::string> gather_group(mesh::GroupKind group, traces::CollectiveOp op,
                                        const float* src, size_t count_in, int64_t& ready_ns);
  // The tag of this rank's next collective on `group`.
  int64_t next_tag(mesh::GroupKind group);
  // Throws unless `got` (from `from`) is the same op over the same count as `mine`.
  void check_same(mesh::GroupKind group, const std::string& mine, const std::string& got,
                  int from) const;
  void check_peer(int peer, const char* what) const;

  int rank_;
  const mesh::Mesh& mesh_;
  ProcessMessenger& messenger_;
  std::array<std::vector<int>, static_cast<size_t>(mesh::GroupKind::kCount)> groups_;
  std::array<int64_t, static_cast<size_t>(mesh::GroupKind::kCount)> sequence_{};
  WorkInFlight work_;
};

class ProcessCpuBackend final : public Backend {
 public:
  // Throws std::runtime_error when the number of processes is not the mesh size.
  ProcessCpuBackend(const mesh::MeshShape& shape, ProcessMessenger& messenger);

  BackendKind kind() const override { return BackendKind::kCpu; }
  std::string description() const override;
  const mesh::Mesh& mesh() const override { return mesh_; }
  bool hosts(int rank) const override { return rank == rank_; }
  ProcessMessenger* processes() override { return &messenger_; }
  void attach_thread(int rank) override;
  DeviceOps& device(int rank) override;
  Transport& transport(int rank) override;
  void synchronize(int rank) override;
  void abort(const std::string& reason) noexcept override { messenger_.abort(reason); }
  bool aborted() const noexcept override { return messenger_.aborted(); }
  bool working() const noexcept override { return transport_ && transport_->working(); }

 private:
  void check_rank(int rank, const char* what) const;

  mesh::Mesh mesh_;
  ProcessMessenger& messenger_;
  int rank_;
  CpuDeviceOps device_;
  std::unique_ptr<ProcessCpuTransport> transport_;
};

// Throws std::runtime_error unless `processes` equals the mesh's world size (one rank per process),
// saying how to launch it.
void check_one_rank_per_process(const mesh::MeshShape& shape, const ProcessMessenger& messenger);

}  // namespace meshscope::runtime
