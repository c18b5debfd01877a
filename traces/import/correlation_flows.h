// Launch -> kernel links from Kineto's args.correlation, for traces whose flow events are missing
// (or lost their partners): CUPTI gives a runtime call and the kernel it launched the same id.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::traces::importer {

struct CorrelationEnd {
  int64_t correlation = 0;
  uint32_t span = 0;  // index into Timeline::spans
  bool gpu = false;   // the launched activity; false: the host call
};

// Adds a flow host call -> GPU span for each correlation id that has both (the last host call in
// file order, as HolisticTraceAnalysis pairs them), before any other flow; returns how many.
size_t add_correlation_flows(Timeline& t, const std::vector<CorrelationEnd>& ends);

// Of the first `count` flows (the correlation flows), removes those whose GPU span already has a
// flow from a host span among the other flows: flow events, where present, stay the source.
void drop_redundant_correlation_flows(Timeline& t, size_t count);

}  // namespace meshscope::traces::importer
