// What the importers take and give besides the Timeline: options, the warning report, the error.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace meshscope::traces {

// ImportOptions::format: "auto" (detect by content: gzip magic, then the first importer of
// traces/import/importer_table.cpp that claims the first bytes, else Chrome JSON) or the name of
// one importer ("chrome-json", "nsys-sqlite").
inline constexpr std::string_view kAutoFormat = "auto";

// How load_traces puts per-rank files on one clock.
enum class ClockAlign : uint8_t {
  kNone = 0,            // keep every file's own time axis
  kBaseTime = 1,        // shift by each file's baseTimeNanoseconds (Kineto) / session start
  kCollectiveEnds = 2,  // kBaseTime, then refine by the ends of matching NCCL collectives
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(ClockAlign::kCount)>
    kClockAlignNames = {"none", "base-time", "collective-ends"};
constexpr std::string_view name(ClockAlign a) { return kClockAlignNames[static_cast<size_t>(a)]; }

// The times an importer accepts: within ±(2^62 - 1) ns of zero (±146 years; epoch-based clocks
// such as Kineto's reach 2116), so the difference of any two fits in int64 and no duration,
// window or offset computed from them overflows. Timestamps beyond are kBadNumber.
inline constexpr int64_t kMaxTimeNs = (int64_t{1} << 62) - 1;
constexpr bool time_in_range(int64_t ns) { return ns >= -kMaxTimeNs && ns <= kMaxTimeNs; }

struct ImportOptions {
  std::string format = std::string(kAutoFormat);
  // Host-side events (CPU ops, CUDA runtime/driver calls, CPU annotations) become kHost and
  // kAnnotation spans on one host device per process; false drops them (counted in the report).
  // Launch flows (runtime call -> kernel) need them.
  bool keep_host = true;
  ClockAlign align = ClockAlign::kCollectiveEnds;  // load_traces only
  // Keep what each imported event was in its file (Timeline::origins: Kineto's correlation id,
  // stream, category and the args meshscope does not model), for `convert` to write back. Off by
  // default: it costs memory (docs/BENCHMARKS.md) and no analysis reads it.
  bool keep_origins = false;
  // load_traces: ranks are the files' positions in the list (a folder's files sorted by name)
  // instead of their distributedInfo.rank; files without one always take their position. Two
  // files of one rank are refused unless this is set.
  bool rank_from_file_order = false;
  // Kernels whose names match one of these ECMAScript regular expressions (searched anywhere in
  // the name) are communication (kCollective), besides those comm_kernels.h knows by name.
  std::vector<std::string> comm_kernel_patterns;
  // Bounds that keep hostile input from exhausting the stack, memory or time.
  int max_depth = 128;                          // JSON nesting
  int64_t max_event_bytes = int64_t{64} << 20;  // one traceEvents element (or top-level value)
  int64_t max_inflated_bytes = int64_t{64} << 30;
  double max_inflate_ratio = 250;  // inflated / compressed, enforced past the first 64 MiB
  // Long reads say how far they are: called about every `progress_interval_s` of reading a file
  // (never for input in memory) with the file, its bytes read so far (of a gzip file: compressed
  // bytes), its size and the seconds since it was opened. Empty: silent.
  std::function<void(const std::string& file, int64_t bytes_read, int64_t file_bytes,
                     double seconds)>
      on_progress;
  double progress_interval_s = 10;
};

// Defects that real profilers emit: the event is skipped (or repaired) and counted, not fatal.
enum class ImportWarning : uint8_t {
  kUnpairedFlow = 0,       // an `s` without its `f` or the reverse (Kineto emits many)
  kFlowWithoutSpan,        // a flow endpoint that lies on no span
  kMissingField,           // an event without ts, ph, pid or dur where it needs one
  kWrongType,              // a field of the wrong JSON type (e.g. ts as a string)
  kNegativeDuration,       // dur < 0 or end < begin
  kBadNumber,              // NaN, Infinity, or a time beyond kMaxTimeNs
  kUnmatchedBeginEnd,      // `E` without `B`, or `B` never closed
  kUnsupportedPhase,       // instant (i/I), async (b/e/n), sample, object and mark events
  kHostDropped,            // host events dropped because ImportOptions::keep_host is false
  kSendRecvDirection,      // an NCCL SendRecv kernel whose direction no linked op told
  kArrayNotClosed,         // JSON array form without its closing `]` (allowed by the format)
  kTooManyDevicesOrLanes,  // beyond the Timeline's 65535 devices or lanes per device
  kUnknownDeviceCategory,  // an event on a device (args.device/stream) of a category not understood
  kArgsTruncated,        // keep_origins: an event with more args than kept (ChromeEvent::kMaxArgs)
  kUnnamedKernel,        // Nsight: a kernel whose name id resolves to no string (StringIds)
  kDeviceBeforeLaunch,   // device work that begins well before the host call that launched it
  kUnnumberedStep,       // a ProfilerStep# marker whose suffix is not an integer
  kRankStepsApart,       // load_traces: a rank whose steps (trace) overlap none of the first's
  kNsysTableNotRead,     // Nsight: rows of an event table the importer does not read
  kCounterWithoutSpans,  // a counter series on a process or device that holds no span
  kNsysWholeGraphs,      // Nsight: CUDA graphs traced whole (GRAPH_TRACE), their nodes unseen
  kUnnamedHostCall,      // Nsight: a CUDA API call whose name id resolves to no string
  kDuplicateLaunch,      // two host calls of one process with one correlation id
  kDuplicateActivity,    // a GPU activity repeating another row (stream, times, correlation)
  kCount
};
// Events skipped because they break the format (a field missing or mistyped, a negative or
// non-finite time, an unmatched B/E, past the device limit, a step marker without its number):
// the figures lack them. The other kinds are what the Timeline does not hold by design.
constexpr bool is_malformed(ImportWarning w) {
  switch (w) {
    case ImportWarning::kMissingField:
    case ImportWarning::kWrongType:
    case ImportWarning::kNegativeDuration:
    case ImportWarning::kBadNumber:
    case ImportWarning::kUnmatchedBeginEnd:
    case ImportWarning::kTooManyDevicesOrLanes:
    case ImportWarning::kUnnumberedStep:
      return true;
    default:
      return false;
  }
}
inline constexpr std::array<std::string_view, static_cast<size_t>(ImportWarning::kCount)>
    kImportWarningNames = {
        "flow events without a partner skipped",
        "flow events on no span skipped",
        "events missing a required field skipped",
        "events with a field of the wrong type skipped",
        "events with a negative duration skipped",
        "events with a non-finite or out-of-range number skipped",
        "unmatched B/E events skipped",
        "instant, async, sample and object events skipped (no span to draw)",
        "host events dropped (--no-host)",
        "NCCL SendRecv kernels of unknown direction taken as sends",
        "trace arrays without their closing ] accepted",
        "events beyond the device or lane limit skipped",
        "device events of a category not understood (e.g. MTIA's mtia_ccp_events) read as host "
        "work, not device time",
        "events with more than 64 args: only the first 64 kept for the converted file",
        "kernels whose name resolves to no string (no StringIds row) kept unnamed, as compute: "
        "a communication kernel among them is not seen as one",
        "device activities that begin more than 1 ms before the host call that launched them: "
        "their time stamps are suspect, and no step window is stretched to cover them",
        "ProfilerStep# markers without an integer step number ignored (no step window)",
        "ranks whose steps (traces without steps: all of them), on the common clock, overlap "
        "none of the first rank's: files of another run, steps profiled at different times, or "
        "clocks no alignment put together; where both or neither have steps each merged step "
        "spans both, where one has, the other's work lies outside them (idle in every figure)",
        "rows of Nsight Systems event tables not read (OS runtime calls, CUDA synchronization, "
        "cuDNN, cuBLAS, MPI, unified memory, other CUPTI activity kinds and NVTX event types): "
        "not in the timeline",
        "counter series dropped: they lie on a process or device with no span, which is not "
        "shown",
        "CUDA graphs traced whole (nsys --cuda-graph-trace=graph) read as one compute span each: "
        "the kernels inside them, communication among them, are not seen",
        "CUDA API calls whose name resolves to no string (no StringIds row) kept unnamed",
        "host calls sharing their process's correlation id with an earlier call: the GPU work of "
        "that id is linked to the last of them",
        "GPU activities repeating another row (same stream, start, end and correlation id) "
        "skipped",
};
constexpr std::string_view name(ImportWarning w) {
  return kImportWarningNames[static_cast<size_t>(w)];
}

// How one rank's clock was put on the common axis by load_traces.
struct RankClock {
  std::string file;
  int rank = -1;                 // distributedInfo.rank, else the file's position in the list
  int64_t offset_ns = 0;         // added to every timestamp of the file
  int matched_collectives = 0;   // NCCL collectives used to refine the offset; 0: base time only
  int reference_rank = -1;       // the rank they were matched with (the first rank's, or one
                                 // sharing a group with it); -1 for the first rank itself
  int64_t residual_skew_ns = 0;  // after alignment: median |end - reference end| over matches
  int64_t max_skew_ns = 0;       // ... and the largest
};

struct ImportReport {
  static constexpr size_t kKinds = static_cast<size_t>(ImportWarning::kCount);
  std::array<uint64_t, kKinds> counts{};
  // Where each warning first occurred: the byte offset in the (inflated) file (-1 where no byte
  // applies), and as text ("byte 1042", "CUPTI_ACTIVITY_KIND_KERNEL row 7"), with the file
  // named once reports of several files are merged.
  std::array<int64_t, kKinds> first_at{};
  std::array<std::string, kKinds> first_where{};
  std::string file;          // set by load_trace
  uint64_t events_read = 0;  // trace events (JSON) or rows (SQLite) looked at
  uint64_t spans_kept = 0;
  std::vector<RankClock> clocks;  // load_traces: one per file, in the merged device order

  ImportReport() { first_at.fill(-1); }
  void warn(ImportWarning w, int64_t byte_offset, uint64_t n = 1);
  void warn_at(ImportWarning w, const std::string& where, uint64_t n = 1);
  uint64_t count(ImportWarning w) const { return counts[static_cast<size_t>(w)]; }
  uint64_t total_warnings() const;
  // One line per warning kind that occurred, e.g. "3 flow events without a partner skipped
  // (first at byte 1042)". With `malformed_only`, only the kinds of events skipped for bytes that
  // break the format (is_malformed): what a command that reads a trace for its figures alone
  // (calibrate, --from-trace) says, without analyze's notes on what a viewer would not draw.
  std::vector<std::string> lines(bool malformed_only = false) const;
  // Adds another file's counts (load_traces).
  void merge(const ImportReport& other);
};

// A file that cannot be used. what() is one line: "FILE: byte N: reason" (byte offset into the
// inflated stream for .gz), or "FILE: WHERE: reason" where no byte applies (SQLite: table, row).
class ImportError : public std::runtime_error {
 public:
  ImportError(const std::filesystem::path& file, int64_t byte_offset, const std::string& reason);
  ImportError(const std::filesystem::path& file, const std::string& where,
              const std::string& reason);
  const std::string& file() const { return file_; }
  int64_t byte_offset() const { return byte_offset_; }  // -1 when not tied to a byte
  const std::string& reason() const { return reason_; }
  // The same error of a gzip file, whose byte offsets count its inflated bytes: the message says
  // so.
  ImportError in_decompressed_data() const;

 private:
  std::string file_;
  int64_t byte_offset_ = -1;
  std::string reason_;
};

}  // namespace meshscope::traces
