// The direction of NCCL SendRecv kernels from the NVTX ranges around their launch.
#include "traces/import/sendrecv_direction.h"

#include <algorithm>
#include <array>
#include <optional>

namespace meshscope::traces::importer {
namespace {

// NCCL's API functions as its NVTX ranges name them (the function's name; some builds wrap the
// body in FUNC_impl).
constexpr std::array<std::string_view, 9> kCollectiveCalls = {
    "ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclBcast",
    "ncclReduce",    "ncclAllToAll",  "ncclAlltoAll",      "ncclGather"};

}  // namespace

void SendRecvDirection::add_range(int64_t thread, int64_t begin_ns, int64_t end_ns,
                                  std::string_view name) {
  std::optional<Role> role;
  if (name.starts_with("nccl:")) {  // PyTorch's record_function names
    switch (comm_op_from_op_name(name)) {
      case CommOp::kSend:
        role = Role::kSend;
        break;
      case CommOp::kRecv:
        role = Role::kRecv;
        break;
      case CommOp::kCollective:
        role = Role::kCollective;
        break;
      default:
        break;
    }
  } else if (name.starts_with("nccl")) {
    if (name.ends_with("_impl")) name.remove_suffix(5);
    if (name == "ncclGroupStart") {
      role = Role::kGroupStart;
    } else if (name == "ncclGroupEnd") {
      role = Role::kGroupEnd;
    } else if (name == "ncclSend") {
      role = Role::kSend;
    } else if (name == "ncclRecv") {
      role = Role::kRecv;
    } else if (std::find(kCollectiveCalls.begin(), kCollectiveCalls.end(), name) !=
               kCollectiveCalls.end()) {
      role = Role::kCollective;
    }
  }
  if (!role || end_ns < begin_ns) return;
  Thread& t = ranges_[thread];
  t.ranges.push_back({begin_ns, end_ns, *role});
  t.ready = false;
}

void SendRecvDirection::prepare(Thread& t) {
  std::sort(t.ranges.begin(), t.ranges.end(), [](const Range& a, const Range& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  });
  t.parent.assign(t.ranges.size(), -1);
  t.in_call.assign(t.ranges.size(), false);
  std::vector<int32_t> open;
  for (int32_t i = 0; i < static_cast<int32_t>(t.ranges.size()); ++i) {
    while (!open.empty() && t.ranges[open.back()].end_ns < t.ranges[i].end_ns) open.pop_back();
    if (!open.empty()) {
      const int32_t p = open.back();
      t.parent[i] = p;
      t.in_call[i] = t.in_call[p] || is_call(t.ranges[p].role);
    }
    open.push_back(i);
  }
  t.ready = true;
}

CommOp SendRecvDirection::direction(int64_t thread, int64_t launch_ns) {
  const auto it = ranges_.find(thread);
  if (it == ranges_.end()) return CommOp::kSendRecv;
  Thread& t = it->second;
  if (!t.ready) prepare(t);
  // The latest range to begin at or before the launch, then up to the innermost that encloses it.
  const auto after = std::upper_bound(t.ranges.begin(), t.ranges.end(), launch_ns,
                                      [](int64_t ns, const Range& r) { return ns < r.begin_ns; });
  auto at = static_cast<int32_t>(after - t.ranges.begin()) - 1;
  while (at >= 0 && t.ranges[at].end_ns < launch_ns) at = t.parent[at];
  int32_t group_end = -1;
  for (; at >= 0; at = t.parent[at]) {
    switch (t.ranges[at].role) {
      case Role::kSend:
        return CommOp::kSend;
      case Role::kRecv:
        return CommOp::kRecv;
      case Role::kCollective:
        return CommOp::kSendRecv;
      case Role::kGroupEnd:
        if (!t.in_call[at]) group_end = at;
        break;
      default:
        break;
    }
  }
  return group_end >= 0 ? from_group(t, group_end) : CommOp::kSendRecv;
}

CommOp SendRecvDirection::from_group(const Thread& t, int32_t group_end) {
  // Back from the group's end over the calls and group markers made outside any call, until the
  // ncclGroupStart that opened this group.
  const Range& end = t.ranges[group_end];
  int depth = 1;
  bool sends = false, recvs = false, others = false;
  for (int32_t i = group_end - 1; i >= 0; --i) {
    const Range& r = t.ranges[i];
    if (t.in_call[i] || r.end_ns > end.begin_ns) continue;  // inside a call, or enclosing
    switch (r.role) {
      case Role::kGroupEnd:
        ++depth;
        break;
      case Role::kGroupStart:
        if (--depth == 0) {
          if (sends == recvs || others) return CommOp::kSendRecv;  // none, or both ways
          return sends ? CommOp::kSend : CommOp::kRecv;
        }
        break;
      case Role::kSend:
        sends = true;
        break;
      case Role::kRecv:
        recvs = true;
        break;
      default:
        others = true;
        break;
    }
  }
  return CommOp::kSendRecv;  // the group's start is not in the export
}

}  // namespace meshscope::traces::importer
