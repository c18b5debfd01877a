// A test backend with the cuda (NCCL) backend's P2P semantics on CPU threads: each sender ->
// receiver channel delivers in send order whatever the tag (as ncclSend/ncclRecv pair by
// position), with sends released through SendSequencer as NcclTransport does. Every message
// carries its tag in a header, so a recv that the channel pairs with the wrong send fails loudly
// instead of computing on the wrong microbatch.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/runtime/cpu_backend.h"
#include "profiler/runtime/send_sequencer.h"

namespace meshscope::runtime::testing {

class OrderedChannelTransport final : public Transport {
 public:
  explicit OrderedChannelTransport(Transport& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  void expect_recv_order(int peer, const std::vector<int64_t>& tags) override {
    ++expect_calls_;
    if (use_order_) sequencers_[peer].expect(tags);
  }
  TransferInfo send(int peer, int64_t tag, const void* src, size_t bytes) override {
    if (peer == rank()) return inner_.send(peer, tag, src, bytes);  // keyed, like NCCL's self path
    std::vector<std::byte> m(sizeof tag + bytes);
    std::memcpy(m.data(), &tag, sizeof tag);
    if (bytes > 0) std::memcpy(m.data() + sizeof tag, src, bytes);
    const auto ready = sequencers_[peer].push(tag, std::move(m));
    if (ready.empty()) ++held_sends_;
    for (const auto& out : ready) inner_.send(peer, kChannelTag, out.data(), out.size());
    return {};
  }
  TransferInfo recv(int peer, int64_t tag, void* dst, size_t bytes) override {
    if (peer == rank()) return inner_.recv(peer, tag, dst, bytes);
    std::vector<std::byte> m(sizeof tag + bytes);
    const TransferInfo info = inner_.recv(peer, kChannelTag, m.data(), m.size());
    int64_t got = 0;
    std::memcpy(&got, m.data(), sizeof got);
    if (got != tag) {
      throw std::runtime_error("rank " + std::to_string(rank()) + " receives tag " +
                               std::to_string(tag) + " from rank " + std::to_string(peer) +
                               " but the channel delivers tag " + std::to_string(got));
    }
    if (bytes > 0) std::memcpy(dst, m.data() + sizeof tag, bytes);
    return info;
  }
  TransferInfo all_reduce(mesh::GroupKind g, float* data, size_t count) override {
    return inner_.all_reduce(g, data, count);
  }
  TransferInfo all_gather(mesh::GroupKind g, const float* src, float* dst, size_t count) override {
    return inner_.all_gather(g, src, dst, count);
  }
  TransferInfo reduce_scatter(mesh::GroupKind g, const float* src, float* dst,
                              size_t count) override {
    return inner_.reduce_scatter(g, src, dst, count);
  }
  TransferInfo all_to_all(mesh::GroupKind g, const float* src, float* dst, size_t count) override {
    return inner_.all_to_all(g, src, dst, count);
  }

  void ignore_recv_order() { use_order_ = false; }
  int expect_calls() const { return expect_calls_; }
  // Sends that had to wait for one the receiver takes earlier.
  int held_sends() const { return held_sends_; }

 private:
  static constexpr int64_t kChannelTag = -1;  // one FIFO per (sender, receiver)
  Transport& inner_;
  std::map<int, SendSequencer<std::vector<std::byte>>> sequencers_;
  bool use_order_ = true;
  int expect_calls_ = 0;
  int held_sends_ = 0;
};

class OrderedChannelBackend final : public Backend {
 public:
  explicit OrderedChannelBackend(const mesh::MeshShape& shape) : inner_(shape) {
    for (int r = 0; r < inner_.world_size(); ++r) {
      transports_.push_back(std::make_unique<OrderedChannelTransport>(inner_.transport(r)));
    }
  }
  BackendKind kind() const override { return BackendKind::kCpu; }
  std::string description() const override { return "cpu with in-order channels"; }
  const mesh::Mesh& mesh() const override { return inner_.mesh(); }
  void attach_thread(int rank) override { inner_.attach_thread(rank); }
  DeviceOps& device(int rank) override { return inner_.device(rank); }
  Transport& transport(int rank) override { return *transports_.at(rank); }
  OrderedChannelTransport& ordered(int rank) { return *transports_.at(rank); }
  void synchronize(int rank) override { inner_.synchronize(rank); }
  void abort(const std::string& reason) noexcept override { inner_.abort(reason); }
  bool aborted() const noexcept override { return inner_.aborted(); }

 private:
  CpuBackend inner_;
  std::vector<std::unique_ptr<OrderedChannelTransport>> transports_;
};

}  // namespace meshscope::runtime::testing
