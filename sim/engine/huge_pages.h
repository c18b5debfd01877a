// An allocator for the engine's big arrays (per op, per send, per rank, per port): blocks of 1 MiB
// and more are 2 MiB-aligned and marked for transparent huge pages, so a 16k-rank program (~100 MB
// of ops, ~16 MB of sends, touched at random ranks) costs a few hundred TLB entries and page faults
// instead of tens of thousands.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace meshscope::engine {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kThreshold = size_t{1} << 20;
  static constexpr std::align_val_t kAlign{alignof(T)};

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kThreshold) return static_cast<T*>(::operator new(bytes, kAlign));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP it is a no-op
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kThreshold) {
      ::operator delete(p, kAlign);
    } else {
      std::free(p);
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace meshscope::engine
