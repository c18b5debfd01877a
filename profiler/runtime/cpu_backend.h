// The cpu backend: ranks are host threads, devices are host memory, transfers are real copies
// through blocking channels, collectives meet among the threads of a group.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "profiler/runtime/abort_state.h"
#include "profiler/runtime/backend.h"
#include "profiler/runtime/cpu_device_ops.h"
#include "profiler/runtime/cpu_group.h"
#include "profiler/runtime/cpu_mailbox.h"

namespace meshscope::runtime {

class CpuTransport final : public Transport {
 public:
  struct GroupSlot {
    CpuGroup* group = nullptr;
    int member = 0;
  };
  CpuTransport(int rank, std::vector<std::unique_ptr<CpuMailbox>>& mailboxes,
               std::array<GroupSlot, static_cast<size_t>(mesh::GroupKind::kCount)> groups,
               const AbortState& abort);

  int rank() const override { return rank_; }
  TransferInfo send(int peer, int64_t tag, const void* src, size_t bytes) override;
  TransferInfo recv(int peer, int64_t tag, void* dst, size_t bytes) override;
  std::string undelivered() const override { return mailboxes_[rank_]->undelivered(); }
  TransferInfo all_reduce(mesh::GroupKind group, float* data, size_t count) override;
  TransferInfo all_gather(mesh::GroupKind group, const float* src, float* dst,
                          size_t count) override;
  TransferInfo reduce_scatter(mesh::GroupKind group, const float* src, float* dst,
                              size_t count) override;
  TransferInfo all_to_all(mesh::GroupKind group, const float* src, float* dst,
                          size_t count) override;

 private:
  void check_peer(int peer, const char* what) const;
  const GroupSlot& slot(mesh::GroupKind g) const { return groups_[static_cast<size_t>(g)]; }

  int rank_;
  std::vector<std::unique_ptr<CpuMailbox>>& mailboxes_;
  std::array<GroupSlot, static_cast<size_t>(mesh::GroupKind::kCount)> groups_;
  const AbortState& abort_;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const mesh::MeshShape& shape, bool pin_threads = false);

  BackendKind kind() const override { return BackendKind::kCpu; }
  std::string description() const override;
  const mesh::Mesh& mesh() const override { return mesh_; }
  void attach_thread(int rank) override;
  DeviceOps& device(int rank) override;
  Transport& transport(int rank) override;
  void synchronize(int rank) override;
  void abort(const std::string& reason) noexcept override;
  bool aborted() const noexcept override { return abort_.aborted(); }
  bool working() const noexcept override { return work_.any(); }

 private:
  void check_rank(int rank, const char* what) const;

  mesh::Mesh mesh_;
  std::vector<int> cpus_;  // CPU of each rank when pinning; empty: no pinning
  AbortState abort_;
  WorkInFlight work_;
  std::vector<std::unique_ptr<CpuMailbox>> mailboxes_;
  std::vector<std::unique_ptr<CpuGroup>> groups_;
  std::vector<std::unique_ptr<CpuDeviceOps>> devices_;
  std::vector<std::unique_ptr<CpuTransport>> transports_;
};

}  // namespace meshscope::runtime
