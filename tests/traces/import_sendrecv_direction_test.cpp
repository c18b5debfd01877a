// The direction of NCCL SendRecv kernels from the NVTX ranges around their launch: the rules of
// sendrecv_direction.h on hand-built range sets.
#include "traces/import/sendrecv_direction.h"

#include <gtest/gtest.h>

namespace meshscope::traces::importer {
namespace {

constexpr int64_t kThread = 7;

TEST(SendRecvDirection, TheInnermostCallAroundTheLaunchDecides) {
  SendRecvDirection d;
  d.add_range(kThread, 0, 100, "nccl:send 0->1");  // PyTorch's range around NCCL's
  d.add_range(kThread, 10, 90, "ncclSend");
  d.add_range(kThread, 20, 80, "ncclGroupEnd");
  d.add_range(kThread, 200, 300, "ncclRecv_impl");  // builds that wrap the body
  d.add_range(kThread, 400, 500, "ncclAllToAll");   // p2p kernels of a collective: both ways
  d.add_range(kThread, 420, 480, "ncclSend");
  d.add_range(kThread, 600, 700, "forward");  // not NCCL's: ignored
  d.add_range(kThread, 610, 690, "nccl:recv, seq = 4");
  EXPECT_EQ(d.direction(kThread, 50), CommOp::kSend);
  EXPECT_EQ(d.direction(kThread, 250), CommOp::kRecv);
  EXPECT_EQ(d.direction(kThread, 450), CommOp::kSend);  // the innermost call is the send
  EXPECT_EQ(d.direction(kThread, 410), CommOp::kSendRecv);
  EXPECT_EQ(d.direction(kThread, 650), CommOp::kRecv);
  EXPECT_EQ(d.direction(kThread, 150), CommOp::kSendRecv);     // between calls
  EXPECT_EQ(d.direction(kThread + 1, 50), CommOp::kSendRecv);  // another thread's launch
}

TEST(SendRecvDirection, AnExplicitGroupIsDecidedByAllItsCalls) {
  SendRecvDirection sends;
  sends.add_range(kThread, 0, 1, "ncclGroupStart");
  sends.add_range(kThread, 2, 3, "ncclGroupStart");  // nested: its end launches nothing
  sends.add_range(kThread, 4, 10, "ncclSend");
  sends.add_range(kThread, 5, 6, "ncclGroupStart");  // inside a call: not the group's
  sends.add_range(kThread, 7, 9, "ncclGroupEnd");
  sends.add_range(kThread, 11, 12, "ncclGroupEnd");
  sends.add_range(kThread, 13, 14, "ncclSend");
  sends.add_range(kThread, 20, 30, "ncclGroupEnd");
  EXPECT_EQ(sends.direction(kThread, 25), CommOp::kSend);

  SendRecvDirection mixed;  // the same with the second call a recv, across the nested group
  mixed.add_range(kThread, 0, 1, "ncclGroupStart");
  mixed.add_range(kThread, 2, 3, "ncclGroupStart");
  mixed.add_range(kThread, 4, 10, "ncclSend");
  mixed.add_range(kThread, 11, 12, "ncclGroupEnd");
  mixed.add_range(kThread, 13, 14, "ncclRecv");
  mixed.add_range(kThread, 20, 30, "ncclGroupEnd");
  EXPECT_EQ(mixed.direction(kThread, 25), CommOp::kSendRecv);

  SendRecvDirection earlier;  // calls of an earlier group do not count
  earlier.add_range(kThread, 0, 1, "ncclGroupStart");
  earlier.add_range(kThread, 2, 3, "ncclRecv");
  earlier.add_range(kThread, 4, 5, "ncclGroupEnd");
  earlier.add_range(kThread, 6, 7, "ncclGroupStart");
  earlier.add_range(kThread, 8, 9, "ncclSend");
  earlier.add_range(kThread, 10, 20, "ncclGroupEnd");
  EXPECT_EQ(earlier.direction(kThread, 15), CommOp::kSend);

  SendRecvDirection no_start;  // the group's start is before the capture: unknown
  no_start.add_range(kThread, 8, 9, "ncclRecv");
  no_start.add_range(kThread, 10, 20, "ncclGroupEnd");
  EXPECT_EQ(no_start.direction(kThread, 15), CommOp::kSendRecv);
  EXPECT_TRUE(SendRecvDirection().empty());
}

}  // namespace
}  // namespace meshscope::traces::importer
