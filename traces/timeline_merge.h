// Putting several Timelines into one: the one rule for the merge of a multi-process run
// (profiler/exec/process_run.cpp) and of per-rank trace files (traces/import/multi_rank.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::traces {

// Appends `part` to `out`, whose devices the caller has already laid out:
//   device_map[d]  the index in out.devices of part's device d, or -1 to leave out its spans,
//                  counters and the flows that touch them;
//   shift_ns       added to every time (spans, counters, steps): the part's clock offset;
//   limit_ns       a moved time beyond ±limit_ns throws std::out_of_range (nothing appended
//                  is rolled back: the caller discards `out`).
// Span names are re-interned, flows and the spans' side tables (collectives, origins) remapped,
// counters appended, and step k of the part widens step k of `out` (or becomes it): steps are
// merged by index. Spans are appended in the part's order; the caller calls out.sort_spans() when
// all are in.
void append_timeline(Timeline& out, const Timeline& part, std::span<const int> device_map,
                     int64_t shift_ns, int64_t limit_ns = INT64_MAX / 2);

// The reverse, for tools that read one file per rank (HolisticTraceAnalysis): each rank's devices
// (Device::rank) with their spans, counters, the flows between them and the steps, as a Timeline
// of its own, in rank order. Its metadata is `t`'s with the rank's own keys ("rank R.key") as
// plain keys and the others' left out, "rank" set, and "world_size" as stated or the ranks' count;
// the run descriptor is `t`'s. Flows between ranks are in neither part.
std::vector<std::pair<int, Timeline>> split_by_rank(const Timeline& t);

}  // namespace meshscope::traces
