// The simulator's event queue: a binary heap keyed by (time, sequence number), so events at the
// same time pop in the order they were pushed and every run is deterministic.
#pragma once

#include <cstdint>
#include <vector>

namespace meshscope::engine {

enum class EventType : uint8_t { kComputeDone = 0, kTransferDone = 1, kCollectiveDone = 2 };

struct Event {
  int64_t time_ns = 0;
  uint64_t seq = 0;
  uint32_t target = 0;   // rank, transfer or collective instance
  uint32_t version = 0;  // transfers: stale completions (rate changed since) are skipped
  EventType type = EventType::kComputeDone;
};

class EventQueue {
 public:
  void reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

  void push(int64_t time_ns, EventType type, uint32_t target, uint32_t version = 0) {
    heap_.push_back(Event{time_ns, next_seq_++, target, version, type});
    sift_up(heap_.size() - 1);
  }

  Event pop() {
    Event top = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return top;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.seq < b.seq);
  }
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    Event e = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace meshscope::engine
