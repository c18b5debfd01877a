// Putting per-rank Timelines on one clock and into one mesh Timeline (the work of load_traces).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

struct RankTrace {
  Timeline timeline;
  std::string file;
  int rank = 0;
  std::optional<int64_t> base_time_ns;  // Kineto baseTimeNanoseconds / nsys session start
};

// The collective an NCCL kernel name performs ("AllReduce" for
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)"); other names are their own type.
std::string collective_type(std::string_view span_name);

// Offsets per rank (ns to add) as options.align says; fills `clocks` (same order as `ranks`).
std::vector<int64_t> align_clocks(const std::vector<RankTrace>& ranks, ClockAlign align,
                                  std::vector<RankClock>& clocks);

// Appends every rank's devices, spans, flows and counters, shifted by its offset, into one
// Timeline; step k is the union of every rank's step k.
Timeline merge_ranks(std::vector<RankTrace>& ranks, const std::vector<int64_t>& offsets);

}  // namespace meshscope::traces::importer
