// Reads a Kineto (Chrome JSON) trace into the event table HolisticTraceAnalysis builds from it, for
// `analyze --window hta` (traces/analysis_hta_window.h says what HTA keeps and why).
#pragma once

#include <filesystem>

#include "traces/analysis_hta_window.h"
#include "traces/import/import_types.h"

namespace meshscope::traces {

// Throws ImportError on a file that is not Chrome JSON (an Nsight SQLite export: HTA reads Kineto
// JSON only) or is malformed.
HtaEventTable read_hta_events(const std::filesystem::path& file, const ImportOptions& options = {});

}  // namespace meshscope::traces
