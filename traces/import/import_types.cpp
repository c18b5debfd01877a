// ImportReport bookkeeping and the one-line ImportError.
#include "traces/import/import_types.h"

namespace meshscope::traces {
namespace {

std::string error_line(const std::string& file, const std::string& where,
                       const std::string& reason) {
  return where.empty() ? file + ": " + reason : file + ": " + where + ": " + reason;
}

}  // namespace

void ImportReport::warn(ImportWarning w, int64_t byte_offset, uint64_t n) {
  const auto i = static_cast<size_t>(w);
  if (counts[i] == 0) {
    first_at[i] = byte_offset;
    first_where[i] = "byte " + std::to_string(byte_offset);
  }
  counts[i] += n;
}

void ImportReport::warn_at(ImportWarning w, const std::string& where, uint64_t n) {
  const auto i = static_cast<size_t>(w);
  if (counts[i] == 0) first_where[i] = where;
  counts[i] += n;
}

uint64_t ImportReport::total_warnings() const {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  return total;
}

namespace {

// Each warning's name for a count of one, in kImportWarningNames' order.
constexpr std::array<std::string_view, kImportWarningNames.size()> kOneWarningNames = {
    "flow event without a partner skipped",
    "flow event on no span skipped",
    "event missing a required field skipped",
    "event with a field of the wrong type skipped",
    "event with a negative duration skipped",
    "event with a non-finite or out-of-range number skipped",
    "unmatched B/E event skipped",
    "instant, async, sample or object event skipped (no span to draw)",
    "host event dropped (--no-host)",
    "NCCL SendRecv kernel of unknown direction taken as a send",
    "trace array without its closing ] accepted",
    "event beyond the device or lane limit skipped",
    "device event of a category not understood (e.g. MTIA's mtia_ccp_events) read as host work, "
    "not device time",
    "event with more than 64 args: only the first 64 kept for the converted file",
    "kernel whose name resolves to no string (no StringIds row) kept unnamed, as compute: a "
    "communication kernel is not seen as one",
    "device activity that begins more than 1 ms before the host call that launched it: its time "
    "stamps are suspect, and no step window is stretched to cover it",
    "ProfilerStep# marker without an integer step number ignored (no step window)",
    "rank whose steps (a trace without steps: all of it), on the common clock, overlap none of "
    "the first rank's: a file of another run, steps profiled at different times, or clocks no "
    "alignment put together; where both or neither have steps each merged step spans both, where "
    "one has, the other's work lies outside them (idle in every figure)",
    "row of Nsight Systems event tables not read (OS runtime calls, CUDA synchronization, cuDNN, "
    "cuBLAS, MPI, unified memory, other CUPTI activity kinds and NVTX event types): not in the "
    "timeline",
    "counter series dropped: it lies on a process or device with no span, which is not shown",
    "CUDA graph traced whole (nsys --cuda-graph-trace=graph) read as one compute span: the "
    "kernels inside it, communication among them, are not seen",
    "CUDA API call whose name resolves to no string (no StringIds row) kept unnamed",
    "host call sharing its process's correlation id with an earlier call: the GPU work of that id "
    "is linked to the last of them",
    "GPU activity repeating another row (same stream, start, end and correlation id) skipped",
};

}  // namespace

std::vector<std::string> ImportReport::lines(bool malformed_only) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < kKinds; ++i) {
    if (counts[i] == 0) continue;
    if (malformed_only && !is_malformed(static_cast<ImportWarning>(i))) continue;
    std::string line = std::to_string(counts[i]) + " " +
                       std::string(counts[i] == 1 ? kOneWarningNames[i] : kImportWarningNames[i]);
    if (!first_where[i].empty()) line += " (first at " + first_where[i] + ")";
    out.push_back(std::move(line));
  }
  return out;
}

void ImportReport::merge(const ImportReport& other) {
  for (size_t i = 0; i < kKinds; ++i) {
    if (other.counts[i] == 0) continue;
    if (counts[i] == 0) {
      first_at[i] = other.first_at[i];
      first_where[i] = other.file.empty() || other.first_where[i].empty()
                           ? other.first_where[i]
                           : other.first_where[i] + " of " + other.file;
    }
    counts[i] += other.counts[i];
  }
  events_read += other.events_read;
  spans_kept += other.spans_kept;
}

ImportError::ImportError(const std::filesystem::path& file, int64_t byte_offset,
                         const std::string& reason)
    : std::runtime_error(error_line(file.string(), "byte " + std::to_string(byte_offset), reason)),
      file_(file.string()),
      byte_offset_(byte_offset),
      reason_(reason) {}

ImportError ImportError::in_decompressed_data() const {
  if (byte_offset_ < 0) return *this;
  ImportError e(file_, "byte " + std::to_string(byte_offset_) + " of the decompressed data",
                reason_);
  e.byte_offset_ = byte_offset_;
  return e;
}

ImportError::ImportError(const std::filesystem::path& file, const std::string& where,
                         const std::string& reason)
    : std::runtime_error(error_line(file.string(), where, reason)),
      file_(file.string()),
      reason_(reason) {}

}  // namespace meshscope::traces
