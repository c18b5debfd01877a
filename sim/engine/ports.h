// A link port of the event loop: its bandwidth and the transfers and collectives sharing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace meshscope::engine {

// Transfers in flight through one port: a pipeline's ports hold one or two, kept inline so a
// port is half a cache line; more spill to the heap.
class PortTransfers {
 public:
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint32_t operator[](size_t i) const { return i < kInline ? inline_[i] : (*more_)[i - kInline]; }
  void push_back(uint32_t id) {
    if (n_ < kInline) {
      inline_[n_] = id;
    } else {
      if (!more_) more_ = std::make_unique<std::vector<uint32_t>>();
      more_->push_back(id);
    }
    ++n_;
  }
  // Removes `id` (present), moving the last one into its place.
  void drop(uint32_t id) {
    size_t i = 0;
    while ((*this)[i] != id) ++i;
    const uint32_t last = (*this)[n_ - 1];
    if (i < kInline) {
      inline_[i] = last;
    } else {
      (*more_)[i - kInline] = last;
    }
    if (--n_ >= kInline) more_->pop_back();
  }

 private:
  static constexpr size_t kInline = 3;
  uint32_t n_ = 0;
  uint32_t inline_[kInline] = {};
  std::unique_ptr<std::vector<uint32_t>> more_;  // beyond kInline
};

// A port's bandwidth is its tier's (Links keeps it per tier).
struct alignas(32) Port {
  PortTransfers active;  // transfers in flight through this port
  int collectives = 0;   // collectives running on it, each counting as one more transfer
  double sharers() const { return static_cast<double>(active.size() + collectives); }
  // Bandwidth per sharer (bytes_per_ns / sharers(); no division for the common lone sharer).
  double share(double bytes_per_ns) const {
    return active.size() == 1 && collectives == 0 ? bytes_per_ns : bytes_per_ns / sharers();
  }
};
static_assert(sizeof(Port) == 32, "two ports a cache line");

}  // namespace meshscope::engine
