// Which thread each span of a Chrome export goes on. Perfetto and chrome://tracing draw the X
// slices of one thread as a stack: a slice that begins inside another and ends after it is
// dropped (Perfetto's slice_tracker counts it as slice_drop_overlapping_complete_event). Source
// traces have such slices on one lane: kernels of one stream under programmatic dependent launch,
// torch's c10d::send crossing its gloo:send. The export keeps each lane's slices on the lane's
// own thread where they nest and moves the others to extra threads of their device, named after
// the lane, so that every slice is drawn; its args (stream, kind) stay those of its lane.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::traces {

struct ExtraThread {
  uint16_t lane = 0;  // the lane whose slices it holds
  uint32_t k = 0;     // 1 for the lane's first extra thread, 2 for its second, ...
};

struct ThreadPlan {
  // Spans that do not nest on their lane's thread -> their thread (tid); the rest use their lane.
  std::unordered_map<uint32_t, uint32_t> moved;
  // Per device, its extra threads in tid order: tid lanes.size() + j is extra[d][j].
  std::vector<std::vector<ExtraThread>> extra;
  uint32_t tid_of(uint32_t span, uint16_t lane) const {
    const auto it = moved.find(span);
    return it == moved.end() ? lane : it->second;
  }
};

// Spans naming a device or lane the Timeline lacks, or ending before they begin, are left on
// their lane (the export refuses them).
ThreadPlan plan_threads(const Timeline& t);

}  // namespace meshscope::traces
