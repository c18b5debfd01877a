// One collective, described once for every layer (schedule actions, the simulator's cost model,
// the transports that run it, the importers that recognise it): what it does, over which group,
// how many bytes, which algorithm. In the spirit of nccl-tests' per-collective descriptor
// (src/common.h: the op, its count and type, the algorithm bandwidth factor).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "traces/enum_names.h"

namespace meshscope::traces {

// Stable values: written into traces. kOther: a collective an imported trace holds that the cost
// model does not price (a broadcast, a reduce, a barrier, a coalesced call), kept for its group
// (Collective::ranks, first_rank): clock alignment and stragglers pair it with its own group's.
// Schedules, the simulator and the transports never use it.
enum class CollectiveOp : uint8_t {
  kAllReduce = 0,
  kAllGather = 1,
  kReduceScatter = 2,
  kAllToAll = 3,
  kOther = 4,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(CollectiveOp::kCount)>
    kCollectiveOpNames = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "other"};
constexpr std::string_view name(CollectiveOp op) { return enum_name(kCollectiveOpNames, op); }
constexpr std::optional<CollectiveOp> parse_collective_op(std::string_view s) {
  return parse_enum<CollectiveOp>(kCollectiveOpNames, s);
}

// Named process groups of a mesh. A rank's group of kind K holds the ranks that differ from it
// only in the K coordinate (kWorld: every rank). Expert parallelism carves its groups out of dp
// (sim/mesh/mesh.h): kEp, ep consecutive dp replicas that shard the experts among them; kEdp
// (expert data parallel), the dp / ep replicas holding the same experts. Stable values: written
// into traces.
enum class GroupKind : uint8_t { kWorld = 0, kDp = 1, kPp = 2, kTp = 3, kEp = 4, kEdp = 5, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(GroupKind::kCount)>
    kGroupKindNames = {"world", "dp", "pp", "tp", "ep", "edp"};
constexpr std::string_view name(GroupKind g) { return enum_name(kGroupKindNames, g); }
constexpr std::optional<GroupKind> parse_group_kind(std::string_view s) {
  return parse_enum<GroupKind>(kGroupKindNames, s);
}

// How the bytes move. kAuto: the transport or the cost model picks (as NCCL's tuner does).
enum class CollectiveAlgorithm : uint8_t {
  kAuto = 0,
  kRing,
  kTree,
  kHierarchical,
  kDirect,
  kNvls,  // NVLink SHARP: the NVSwitch reduces (Hopper and later)
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(CollectiveAlgorithm::kCount)>
    kCollectiveAlgorithmNames = {"auto", "ring", "tree", "hierarchical", "direct", "nvls"};
constexpr std::string_view name(CollectiveAlgorithm a) {
  return enum_name(kCollectiveAlgorithmNames, a);
}
constexpr std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view s) {
  return parse_enum<CollectiveAlgorithm>(kCollectiveAlgorithmNames, s);
}

// The most members a group may have as a trace names it (Collective::ranks): 2^24, an
// assumption far beyond any job's rank count; a larger number is a damaged file.
inline constexpr int32_t kMaxGroupRanks = 1 << 24;

struct Collective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  GroupKind group = GroupKind::kWorld;
  // The full (unsharded) buffer of one rank: the all-reduce buffer, the all-gather's output, the
  // reduce-scatter's input, the all-to-all's send buffer. 0 where not known.
  int64_t bytes = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  // The group's members where the trace names their number and not the group's kind: an imported
  // NCCL collective's "Group size" (PyTorch's record_param_comms args on its kernel), whose mesh
  // axis a profile does not say (`group` is then kWorld, standing for "not known"). 0: the members
  // of `group` in the run's mesh.
  int32_t ranks = 0;
  // Who the group is, where the trace lists its global ranks evenly spaced (PyTorch's "Process
  // Group Ranks" on an NCCL kernel): first_rank + k · rank_stride for k < ranks. -1: not known
  // (a mesh group's members follow from `group` and the mesh instead).
  int32_t first_rank = -1;
  int32_t rank_stride = 0;
  // Whether global rank r is a member; nullopt where the members are not listed.
  constexpr std::optional<bool> has_member(int64_t r) const {
    if (first_rank < 0 || rank_stride <= 0 || ranks <= 0) return std::nullopt;
    const int64_t k = r - first_rank;
    return k >= 0 && k % rank_stride == 0 && k / rank_stride < ranks;
  }
  friend bool operator==(const Collective&, const Collective&) = default;
};

}  // namespace meshscope::traces
