// Steps the importers share once their spans and flows are in place.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

// A launch whose host call was not kept (ImportOptions::keep_host false): when the call began,
// and the device activity it launched.
struct DroppedLaunch {
  int64_t host_begin_ns = 0;
  int64_t device_begin_ns = 0;
  int64_t device_end_ns = 0;
  uint32_t device_name = 0;  // the launched span's name (index into Timeline::strings)
};

// Device work cannot begin before the host call that launched it. CUPTI's device time stamps,
// put on the host clock, trail the call by microseconds (5 µs at the least in the H800, A100 and
// B200 traces of tests/fixtures/hta); a launch whose device work begins more than this before its
// call has a time stamp that is wrong (an edited or corrupted file, or a clock gone astray).
// 1 ms is an assumption: far beyond any clock conversion error, far below a step.
inline constexpr int64_t kLaunchBeforeCallToleranceNs = 1'000'000;

// Each step window (host ranges such as ProfilerStep#N, sorted by begin) grows to cover the
// device work launched inside it: a launch flow whose host span begins in the window, or a
// dropped launch whose call began in it, pulls the window out to the launched activity. Launched
// work that begins more than kLaunchBeforeCallToleranceNs before its call is counted in `report`
// (ImportWarning::kDeviceBeforeLaunch, the first one named) and stretches no window; this check
// runs whether or not there are step windows.
void extend_steps_by_launches(Timeline& t, ImportReport& report,
                              const std::vector<DroppedLaunch>& dropped = {});

// Lanes of GPU devices that carry communication spans and no compute become LaneKind::kComm (a
// stream that runs both, as vLLM's custom all-reduce beside its GEMMs, stays a compute lane).
void mark_comm_lanes(Timeline& t, const std::vector<bool>& device_is_gpu);

// Removes devices that hold no span (every event of theirs was skipped, or a process only named
// itself), which would otherwise show as 100% bubble; span and counter device indices are
// renumbered in order, so sorted spans stay sorted. Counters on a removed device go with it, each
// series counted in `report` (kCounterWithoutSpans). Returns how many devices were removed.
size_t drop_devices_without_spans(Timeline& t, ImportReport& report);

// metadata["import_warnings"]: the report's lines joined, when there are any.
void note_warnings(Timeline& t, const ImportReport& report);

}  // namespace meshscope::traces::importer
