// Steps the importers share once their spans and flows are in place.
#pragma once

#include <vector>

#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

// Each step window (host ranges such as ProfilerStep#N, sorted by begin) grows to cover the
// device work launched inside it: a launch flow whose host span begins in the window pulls the
// window's end out to the launched span's end.
void extend_steps_by_launches(Timeline& t);

// Lanes of GPU devices that carry communication spans become LaneKind::kComm.
void mark_comm_lanes(Timeline& t, const std::vector<bool>& device_is_gpu);

// Removes devices that hold no span (every event of theirs was skipped, or a process only named
// itself), which would otherwise show as 100% bubble; span and counter device indices are
// renumbered in order, so sorted spans stay sorted. Returns how many were removed.
size_t drop_devices_without_spans(Timeline& t);

// metadata["import_warnings"]: the report's lines joined, when there are any.
void note_warnings(Timeline& t, const ImportReport& report);

}  // namespace meshscope::traces::importer
