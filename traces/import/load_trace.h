// Open the traces people already have — Chrome/Kineto JSON (.json, .json.gz; also meshscope's own
// exports) and Nsight Systems SQLite exports — as Timelines, one file or a whole multi-rank run.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::traces {

// The importer format of the file ("chrome-json", "nsys-sqlite"), judged from its first bytes:
// gzip magic (then the inflated content), the importers' magic ("SQLite format 3"), else JSON.
// Throws ImportError when the file cannot be read.
std::string_view detect_trace_format(const std::filesystem::path& file);

// Reads one trace file. Times stay on the file's own axis (Chrome `ts` µs -> ns, exactly to the
// ns); Kineto's baseTimeNanoseconds goes to metadata["base_time_ns"]. Devices: one per GPU
// ("GPU 0", or "rank R · GPU 0" when distributedInfo names a rank) with a lane per stream, and one
// host device per process with a lane per thread. Spans are sorted (Timeline::sort_spans).
// Throws ImportError on an unusable file; counted defects go to `report` when given and to
// metadata["import_warnings"].
Timeline load_trace(const std::filesystem::path& file, const ImportOptions& options = {},
                    ImportReport* report = nullptr);

// The same from bytes in memory (a drag-and-drop, a fuzzer); `display_name` names it in errors.
Timeline load_trace_bytes(std::string_view bytes, std::string_view display_name,
                          const ImportOptions& options = {}, ImportReport* report = nullptr);

// Reads per-rank files as one mesh Timeline: devices of every rank (ordered by rank), clocks put
// on one axis as options.align says (report->clocks tells the offsets and the residual skew),
// steps merged by index. Each path may be a file or a folder (its trace files, sorted by name).
Timeline load_traces(std::span<const std::filesystem::path> paths,
                     const ImportOptions& options = {}, ImportReport* report = nullptr);

// What the commands and the viewer read from the paths they are given: each path must exist
// (ImportError "PATH: no such file or folder", or stat's reason, naming the first that does not,
// before anything is read); then one file is one trace (load_trace: possibly many ranks, as
// meshscope's own exports are), and a folder or several paths are the per-rank files of one run
// (load_traces).
Timeline load_trace_paths(std::span<const std::filesystem::path> paths,
                          const ImportOptions& options = {}, ImportReport* report = nullptr);

// The same from bytes in memory, one rank's file each (a fuzzer); `name` names it in errors.
struct NamedTraceBytes {
  std::string name;
  std::string_view bytes;
};
Timeline load_traces_bytes(std::span<const NamedTraceBytes> files,
                           const ImportOptions& options = {}, ImportReport* report = nullptr);

// The one rule for "nothing usable was read" (every command and the viewer exit non-zero on it):
// a trace without spans — `{"traceEvents":[]}`, events that all lacked "ph" — throws ImportError
// naming `source` and, when `report` says so, how many events were read and skipped.
void require_spans(const Timeline& t, const std::filesystem::path& source,
                   const ImportReport* report = nullptr);

// The trace files directly inside a folder (*.json, *.json.gz, *.sqlite, *.db), sorted by name
// with numbers in numeric order (natural_less: rank2.json before rank10.json).
std::vector<std::filesystem::path> trace_files_in(const std::filesystem::path& folder);
// Whether `a` sorts before `b` with each run of digits compared as a number.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace meshscope::traces
