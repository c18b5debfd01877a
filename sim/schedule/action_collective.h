// The typed collective a schedule action carries out, for the Timeline's per-span side table
// (traces::Timeline::collectives): the executor's tracers and the simulator's recorder both ask
// here, so an action names its collective in one place.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/schedule/action.h"
#include "traces/collective.h"

namespace meshscope::schedule {

// The collective op of a collective action kind; nullopt for every other kind.
constexpr std::optional<traces::CollectiveOp> collective_op(ActionKind k) {
  switch (k) {
    case ActionKind::kAllReduce:
      return traces::CollectiveOp::kAllReduce;
    case ActionKind::kAllGather:
      return traces::CollectiveOp::kAllGather;
    case ActionKind::kReduceScatter:
      return traces::CollectiveOp::kReduceScatter;
    case ActionKind::kAllToAll:
      return traces::CollectiveOp::kAllToAll;
    default:
      return std::nullopt;
  }
}

// Op, group and the bytes it moves (`bytes`: the payload the caller resolved; the action's own
// when that is 0); nullopt for a non-collective action.
inline std::optional<traces::Collective> collective_of(const Action& a, int64_t bytes = 0) {
  const auto op = collective_op(a.kind);
  if (!op) return std::nullopt;
  return traces::Collective{.op = *op,
                            .group = a.group,
                            .bytes = bytes > 0 ? bytes : a.bytes,
                            .algorithm = traces::CollectiveAlgorithm::kAuto};
}

}  // namespace meshscope::schedule
