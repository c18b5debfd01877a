// The host side of cuda-virtual's transport (no GPU needed): message matching by
// (source, destination, tag) in send order, blocking receives, rendezvous rounds, and abort
// waking every waiter with the abort's reason.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "profiler/runtime/cuda/virtual_fabric.h"

namespace meshscope::runtime::cuda {
namespace {

Message msg(size_t bytes, int64_t t) { return {nullptr, bytes, nullptr, t}; }

TEST(CudaVirtualMailboxes, MatchBySourceDestinationAndTagInSendOrder) {
  AbortState abort;
  Mailboxes box(abort);
  box.post(0, 1, 5, msg(10, 1));
  box.post(0, 1, 6, msg(20, 2));
  box.post(0, 1, 5, msg(30, 3));
  box.post(2, 1, 5, msg(40, 4));
  EXPECT_EQ(box.take(0, 1, 6).bytes, 20u);
  EXPECT_EQ(box.take(0, 1, 5).bytes, 10u);
  EXPECT_EQ(box.take(2, 1, 5).bytes, 40u);
  EXPECT_EQ(box.take(0, 1, 5).bytes, 30u);
  EXPECT_TRUE(box.drain().empty());
}

TEST(CudaVirtualMailboxes, TakeWaitsForTheSend) {
  AbortState abort;
  Mailboxes box(abort);
  std::atomic<bool> posted{false};
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    posted = true;
    box.post(3, 0, 1, msg(8, 77));
  });
  const Message m = box.take(3, 0, 1);
  EXPECT_TRUE(posted.load());
  EXPECT_EQ(m.posted_ns, 77);
  sender.join();
}

TEST(CudaVirtualMailboxes, AbortWakesABlockedTakeWithTheReason) {
  AbortState abort;
  Mailboxes box(abort);
  std::thread watchdog([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    abort.set("deadlock: rank 0 waits");
    box.wake_all();
  });
  try {
    box.take(1, 0, 9);
    FAIL() << "take returned without a message";
  } catch (const Aborted& e) {
    EXPECT_STREQ(e.what(), "deadlock: rank 0 waits");
  }
  watchdog.join();
}

TEST(CudaVirtualMailboxes, UntakenMessagesAreHandedBackForCleanup) {
  AbortState abort;
  Mailboxes box(abort);
  box.post(0, 1, 1, msg(4, 0));
  box.post(1, 0, 1, msg(4, 0));
  EXPECT_EQ(box.drain().size(), 2u);
}

// Events are opaque handles on the host side: fake ones stand for a sender's events.
cudaEvent_t event(uintptr_t v) { return reinterpret_cast<cudaEvent_t>(v); }

TEST(CudaVirtualMailboxes, EventsGoBackToTheRankThatMadeThemOnlyOnce) {
  AbortState abort;
  Mailboxes box(abort);
  box.post(0, 1, 1, {nullptr, 4, event(0x10), 0});
  box.post(2, 1, 1, {nullptr, 4, event(0x20), 0});
  const Message a = box.take(0, 1, 1);
  const Message b = box.take(2, 1, 1);
  box.give_back(0, a.ready);  // what rank 1 does once its stream waits on them
  box.give_back(2, b.ready);
  EXPECT_TRUE(box.take_back(1).empty());  // the receiver owns none of them
  EXPECT_EQ(box.take_back(0), std::vector<cudaEvent_t>{event(0x10)});
  EXPECT_EQ(box.take_back(2), std::vector<cudaEvent_t>{event(0x20)});
  EXPECT_TRUE(box.take_back(0).empty());
}

TEST(CudaVirtualMailboxes, EventsOfUntakenMessagesGoBackToTheirSenders) {
  AbortState abort;
  Mailboxes box(abort);
  box.post(3, 0, 1, {nullptr, 4, event(0x30), 0});
  const std::vector<Message> left = box.drain();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].ready, nullptr);  // not the cleaner's to destroy
  EXPECT_EQ(box.take_back(3), std::vector<cudaEvent_t>{event(0x30)});
}

TEST(CudaVirtualRendezvous, EveryMemberGetsEveryContributionInMemberOrder) {
  AbortState abort;
  constexpr int kMembers = 4, kRounds = 50;
  Rendezvous r(kMembers, abort);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int m = 0; m < kMembers; ++m) {
    threads.emplace_back([&, m] {
      for (int round = 0; round < kRounds; ++round) {
        Contribution mine;
        mine.t_ns = round * 100 + m;  // identifies member and round
        const auto all = r.exchange(m, mine);
        for (int i = 0; i < kMembers; ++i) {
          if (all[i].t_ns != round * 100 + i) ++mismatches;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CudaVirtualRendezvous, AbortWakesMembersWaitingForALateOne) {
  AbortState abort;
  Rendezvous r(3, abort);
  std::atomic<int> aborted{0};
  std::vector<std::thread> threads;
  for (int m = 0; m < 2; ++m) {  // member 2 never arrives
    threads.emplace_back([&, m] {
      try {
        r.exchange(m, {});
      } catch (const Aborted&) {
        ++aborted;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  abort.set("rank 2 failed");
  r.wake_all();
  for (auto& t : threads) t.join();
  EXPECT_EQ(aborted.load(), 2);
  EXPECT_THROW(r.exchange(2, {}), Aborted);  // and later calls fail at once
}

}  // namespace
}  // namespace meshscope::runtime::cuda
