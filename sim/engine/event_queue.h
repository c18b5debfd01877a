// The simulator's event queue, ordered by (time, sequence number) so events at the same time pop
// in the order they were pushed and every run is deterministic. Events are grouped into one FIFO
// bucket per distinct time, with a binary heap over the distinct times: big meshes have thousands
// of ranks finishing work at the same instant (identical replicas), which then cost a vector
// append and read instead of a heap sift each.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace meshscope::engine {

// kCollectiveRelease: a collective's consumers may go on before it ends (CollectiveOverlap).
enum class EventType : uint8_t {
  kComputeDone = 0,
  kTransferDone = 1,
  kCollectiveDone = 2,
  kCollectiveRelease = 3
};

struct Event {
  int64_t time_ns = 0;
  uint64_t key = 0;  // seq << 26 | type << 24 | target

  uint64_t seq() const { return key >> 26; }
  EventType type() const { return static_cast<EventType>((key >> 24) & 3); }
  uint32_t target() const { return static_cast<uint32_t>(key & ((1u << 24) - 1)); }
};

class EventQueue {
 public:
  static constexpr uint32_t kMaxTarget = (1u << 24) - 1;

  void reserve(size_t n) { index_.reserve(n); }
  bool empty() const { return heap_.empty(); }

  // Returns the event's sequence number (transfers keep it to recognise their latest event).
  [[gnu::always_inline]] uint64_t push(int64_t time_ns, EventType type, uint32_t target) {
    const uint64_t seq = next_seq_++;
    const uint64_t key = seq << 26 | uint64_t{static_cast<uint8_t>(type)} << 24 | target;
    buckets_[bucket_for(time_ns)].keys.push_back(key);
    return seq;
  }

  // The keys still to pop at the earliest pending time, in the order they will pop: the event
  // loop looks a few events ahead to fetch their state before it needs it.
  std::pair<const uint64_t*, size_t> front_keys() const {
    if (heap_.empty()) return {nullptr, 0};
    const Bucket& b = buckets_[heap_.front().bucket];
    return {b.keys.data() + b.next, b.keys.size() - b.next};
  }

  Event pop() {
    Bucket& b = buckets_[heap_.front().bucket];
    const Event e{heap_.front().time_ns, b.keys[b.next++]};
    if (b.next == b.keys.size()) retire_front();
    return e;
  }

 private:
  struct Bucket {
    std::vector<uint64_t> keys;
    size_t next = 0;
  };
  struct Slot {
    int64_t time_ns;
    uint32_t bucket;
  };

  // Pending times recently looked up, direct-mapped by a hash of the time: most pushes go to a
  // time some other rank's event just went to, and find its bucket with one comparison.
  static constexpr int kCacheBits = 6;
  static size_t cache_slot(int64_t t) {
    return static_cast<size_t>((static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ull) >>
                               (64 - kCacheBits));
  }

  // Inline, the lookup that hits (most pushes): the event loop pushes once per event.
  [[gnu::always_inline]] uint32_t bucket_for(int64_t t) {
    const Slot& cached = cache_[cache_slot(t)];
    if (cached.time_ns == t && cached.bucket != kNone) return cached.bucket;
    return find_bucket(t);
  }

  [[gnu::noinline]] uint32_t find_bucket(int64_t t) {
    uint32_t b;
    auto it = index_.find(t);
    if (it != index_.end()) {
      b = it->second;
    } else {
      if (!spare_.empty()) {
        b = spare_.back();
        spare_.pop_back();
      } else {
        b = static_cast<uint32_t>(buckets_.size());
        buckets_.emplace_back();
      }
      index_.emplace(t, b);
      heap_push(Slot{t, b});
    }
    cache_[cache_slot(t)] = Slot{t, b};
    return b;
  }

  void retire_front() {
    const Slot s = heap_.front();
    Bucket& b = buckets_[s.bucket];
    b.keys.clear();
    b.next = 0;
    spare_.push_back(s.bucket);
    index_.erase(s.time_ns);
    if (Slot& cached = cache_[cache_slot(s.time_ns)]; cached.bucket == s.bucket)
      cached.bucket = kNone;
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
  }

  void heap_push(Slot s) {
    heap_.push_back(s);
    size_t i = heap_.size() - 1;
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (heap_[parent].time_ns <= s.time_ns) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = s;
  }

  void sift_down(size_t i) {
    const size_t n = heap_.size();
    const Slot s = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].time_ns < heap_[child].time_ns) ++child;
      if (heap_[child].time_ns >= s.time_ns) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = s;
  }

  static constexpr uint32_t kNone = UINT32_MAX;  // a cache_ slot naming no bucket
  static std::array<Slot, size_t{1} << kCacheBits> empty_cache() {
    std::array<Slot, size_t{1} << kCacheBits> c;
    c.fill(Slot{0, kNone});
    return c;
  }
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> spare_;
  std::vector<Slot> heap_;  // one entry per distinct pending time
  std::unordered_map<int64_t, uint32_t> index_;
  std::array<Slot, size_t{1} << kCacheBits> cache_ = empty_cache();
  uint64_t next_seq_ = 0;
};

}  // namespace meshscope::engine
