// Collectives among the rank threads of a group, with real copies.
#include "profiler/runtime/cpu_group.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/ops.h"
#include "profiler/runtime/clock.h"

namespace meshscope::runtime {

using traces::CollectiveOp;

CpuGroup::CpuGroup(mesh::GroupKind kind, std::vector<int> ranks, const AbortState& abort,
                   WorkInFlight& work)
    : kind_(kind),
      ranks_(std::move(ranks)),
      abort_(abort),
      work_(work),
      inputs_(ranks_.size(), nullptr) {}

void CpuGroup::combine() {
  const size_t n = ranks_.size();
  if (op_ == CollectiveOp::kAllGather || op_ == CollectiveOp::kAllToAll) {
    // All-to-all keeps every member's whole send buffer: a member that leaves first may overwrite
    // its src while the others still copy their blocks of it.
    const size_t per_member = op_ == CollectiveOp::kAllGather ? count_ : count_ * n;
    result_.resize(per_member * n);
    for (size_t i = 0; i < n; ++i) {
      if (per_member > 0) {
        std::memcpy(result_.data() + i * per_member, inputs_[i], per_member * sizeof(float));
      }
    }
    return;
  }
  const size_t total = op_ == CollectiveOp::kAllReduce ? count_ : count_ * n;
  result_.resize(total);
  kernels::cpu::sum(total, inputs_.data(), static_cast<int>(n), result_.data());
}

TransferInfo CpuGroup::run(CollectiveOp op, int member, const float* src, float* dst,
                           size_t count) {
  std::unique_lock lock(mu_);
  if (abort_.aborted()) abort_.throw_aborted();
  if (arrived_ == 0) {
    op_ = op;
    count_ = count;
    mismatch_.clear();
  } else if ((op != op_ || count != count_) && mismatch_.empty()) {
    mismatch_ = std::string(traces::name(op)) + " of " + std::to_string(count) +
                " floats on rank " + std::to_string(ranks_[member]) + " met " +
                std::string(traces::name(op_)) + " of " + std::to_string(count_) +
                " floats in group " + std::string(mesh::name(kind_));
  }
  inputs_[member] = src;
  const uint64_t my_generation = generation_;
  if (++arrived_ == size()) {
    ready_ns_ = host_now_ns();
    if (mismatch_.empty()) {
      const WorkInFlight::Scope summing(work_);
      combine();
    }
    done_mismatch_ = mismatch_;
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return generation_ != my_generation || abort_.aborted(); });
    if (generation_ == my_generation) abort_.throw_aborted();
  }
  // This collective's verdict, not the next one's: a member woken late may find the next begun.
  if (!done_mismatch_.empty()) throw std::runtime_error("collective mismatch: " + done_mismatch_);
  // A member that waited starts its copy when it wakes: the wait, wake-up included, is idle.
  const TransferInfo info{std::max(ready_ns_, host_now_ns())};
  const float* out = result_.data();
  const size_t n = ranks_.size();
  // The result stays put until every member arrives at the next collective, which this member
  // has not yet done: copying without the lock lets members copy in parallel.
  lock.unlock();
  const WorkInFlight::Scope copying(work_);
  if (op == CollectiveOp::kAllToAll) {
    // Block i of dst: member i's block for this member.
    for (size_t i = 0; i < n && count > 0; ++i) {
      std::memcpy(dst + i * count, out + (i * n + static_cast<size_t>(member)) * count,
                  count * sizeof(float));
    }
    return info;
  }
  size_t out_count = op == CollectiveOp::kAllGather ? count * n : count;
  if (op == CollectiveOp::kReduceScatter) out += static_cast<size_t>(member) * count;
  if (out_count > 0) std::memcpy(dst, out, out_count * sizeof(float));
  return info;
}

void CpuGroup::wake() {
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

}  // namespace meshscope::runtime
