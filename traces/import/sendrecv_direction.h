// Which way an NCCL SendRecv kernel moves data, from the NVTX ranges around the host call that
// launched it. NCCL runs ncclSend and ncclRecv as one kind of kernel (ncclKernel_SendRecv_...,
// ncclDevKernel_SendRecv in newer releases) whose name and CUPTI record say nothing of the
// direction, and an Nsight export holds no kernel parameters (CUPTI_ACTIVITY_KIND_KERNEL has the
// launch geometry, not the arguments). What it does hold: NCCL's own NVTX ranges, named after the
// API function (NVTX3_FUNC_WITH_PARAMS in NCCL's src/collectives.cc: "ncclSend", "ncclRecv",
// "ncclAllReduce", and "ncclGroupStart"/"ncclGroupEnd" from src/group.cc), and PyTorch's
// ("nccl:send 0->1", "nccl:recv 1<-0") where it emits NVTX, all on the thread that makes the call.
// The kernel is launched inside the call (ncclSend ends its implicit group), or inside the
// ncclGroupEnd of an explicit group. So, for a launch at time t on a thread:
//   1. climb the ranges that enclose t, innermost first, past ncclGroupStart/End: the first
//      send or recv range gives the direction; a collective range leaves it unknown;
//   2. if none does but t lies in an ncclGroupEnd that is not inside a call, the calls made since
//      its matching ncclGroupStart (nesting counted) decide: all sends -> send, all recvs ->
//      recv; a mix is a kernel that really moves data both ways (batch_isend_irecv) -> unknown.
// Unknown also when the export has no NVTX ranges (NCCL built without NVTX, nsys run with
// -t cuda only) or the launching call is not in CUPTI_ACTIVITY_KIND_RUNTIME.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "traces/import/kineto_names.h"

namespace meshscope::traces::importer {

class SendRecvDirection {
 public:
  // Keeps the range when its name is an NCCL call or group marker; others are ignored.
  void add_range(int64_t thread, int64_t begin_ns, int64_t end_ns, std::string_view name);
  bool empty() const { return ranges_.empty(); }
  // kSend or kRecv when the ranges tell; kSendRecv when they do not.
  CommOp direction(int64_t thread, int64_t launch_ns);

 private:
  enum class Role : uint8_t { kGroupStart, kGroupEnd, kSend, kRecv, kCollective };
  struct Range {
    int64_t begin_ns, end_ns;
    Role role;
  };
  struct Thread {
    std::vector<Range> ranges;    // sorted by (begin, end descending) on first use
    std::vector<int32_t> parent;  // index of the enclosing range, -1 for none
    std::vector<bool> in_call;    // some enclosing range is a send, recv or collective
    bool ready = false;
  };
  static bool is_call(Role r) {
    return r == Role::kSend || r == Role::kRecv || r == Role::kCollective;
  }
  static void prepare(Thread& t);
  static CommOp from_group(const Thread& t, int32_t group_end);

  std::unordered_map<int64_t, Thread> ranges_;
};

}  // namespace meshscope::traces::importer
