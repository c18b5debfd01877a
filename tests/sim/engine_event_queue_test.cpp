// The simulator's event queue against std::priority_queue on random pushes and pops: events pop in
// (time, push order) order, whatever the mix of repeated times, interleaving and bucket reuse.
#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include "sim/engine/event_queue.h"

namespace meshscope::engine {
namespace {

struct Expected {
  int64_t time_ns;
  uint64_t seq;
  EventType type;
  uint32_t target;
  bool operator>(const Expected& o) const {
    return std::tie(time_ns, seq) > std::tie(o.time_ns, o.seq);
  }
};

// One random trial: `ops` operations, pushes at times drawn from [now, now + spread) so that
// equal times are frequent when spread is small, pops whenever a coin says so.
void run_trial(uint32_t seed, int ops, int64_t spread) {
  std::mt19937_64 rng(seed);
  EventQueue q;
  std::priority_queue<Expected, std::vector<Expected>, std::greater<>> ref;
  int64_t now = 0;  // the simulator never schedules into the past
  for (int i = 0; i < ops; ++i) {
    const bool push = ref.empty() || rng() % 100 < 55;
    if (push) {
      const int64_t t = now + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
      const auto type = static_cast<EventType>(rng() % 3);
      const auto target = static_cast<uint32_t>(rng() % (EventQueue::kMaxTarget + 1));
      const uint64_t seq = q.push(t, type, target);
      ref.push({t, seq, type, target});
    } else {
      ASSERT_FALSE(q.empty());
      const Event e = q.pop();
      const Expected want = ref.top();
      ref.pop();
      ASSERT_EQ(e.time_ns, want.time_ns) << "seed " << seed << " op " << i;
      ASSERT_EQ(e.seq(), want.seq) << "seed " << seed << " op " << i;
      ASSERT_EQ(e.type(), want.type);
      ASSERT_EQ(e.target(), want.target);
      now = e.time_ns;
    }
  }
  while (!ref.empty()) {
    ASSERT_FALSE(q.empty());
    const Event e = q.pop();
    ASSERT_EQ(e.time_ns, ref.top().time_ns);
    ASSERT_EQ(e.seq(), ref.top().seq);
    ref.pop();
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, PopsInTimeThenPushOrderLikeAPriorityQueue) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    // Few distinct times (long same-time buckets, the recent-bucket cache), then many.
    for (const int64_t spread : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{1000000}})
      run_trial(seed, 4000, spread);
  }
}

TEST(EventQueue, TimesFarApartAndNegativeDeltasNeverReorder) {
  EventQueue q;
  q.push(5, EventType::kTransferDone, 1);
  q.push(-3, EventType::kComputeDone, 2);  // before the first: pops first
  q.push(INT64_MAX / 2, EventType::kCollectiveDone, 3);
  q.push(-3, EventType::kComputeDone, 4);  // same time as an earlier push: after it
  std::vector<uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().target());
  EXPECT_EQ(order, (std::vector<uint32_t>{2, 4, 1, 3}));
  // The extremes of the time range, pushed into an empty queue's cache of recent times.
  EventQueue e;
  e.push(INT64_MIN, EventType::kComputeDone, 7);
  e.push(0, EventType::kComputeDone, 8);
  e.push(INT64_MIN, EventType::kComputeDone, 9);
  order.clear();
  while (!e.empty()) order.push_back(e.pop().target());
  EXPECT_EQ(order, (std::vector<uint32_t>{7, 9, 8}));
}

}  // namespace
}  // namespace meshscope::engine
