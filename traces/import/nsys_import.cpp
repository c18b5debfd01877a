// Nsight Systems SQLite -> Timeline. GPU activity (CUPTI kernel, memcpy, memset tables, and CUDA
// graphs traced whole) goes to one device per deviceId with a lane per stream of a process and
// context (CUPTI's streamId is unique within a context only); CUDA runtime calls and NVTX ranges
// go to one host device per process with a lane per thread (pid/tid decoded from globalTid as the
// nsys documentation says: pid = globalTid / 2^24 % 2^24, tid = globalTid % 2^24). Launch flows
// join runtime calls to the GPU work with the same (process, correlationId). NCCL SendRecv kernels
// get their direction from the NVTX ranges around their launch (sendrecv_direction.h).
#include <array>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "traces/host_memory.h"
#include "traces/import/importer_table.h"
#include "traces/import/nsys_importer.h"
#include "traces/import/nsys_tables.h"

namespace meshscope::traces::importer {
namespace nsys {

Timeline Importer::run() {
  for (std::string_view t : kGpuTables) {
    if (db_.has_table(std::string(t))) present_.insert(std::string(t));
  }
  for (std::string_view t : {kRuntimeTable, kNvtxTable}) {
    if (db_.has_table(std::string(t))) present_.insert(std::string(t));
  }
  if (present_.empty()) {
    throw ImportError(name_, "",
                      "not an Nsight Systems export: none of the CUPTI_ACTIVITY_KIND_* or "
                      "NVTX_EVENTS tables is there");
  }
  make_devices();
  nsys::count_rows_not_read(db_, present_, report_);
  for (std::string_view t : kGpuTables) {
    if (present_.count(std::string(t))) read_gpu_table(std::string(t));
  }
  for (const SendRecvKernel& k : send_recv_) {
    if (k.correlation) sendrecv_correlations_.insert({k.pid, *k.correlation});
  }
  if (present_.count(std::string(kRuntimeTable))) read_runtime();
  if (present_.count(std::string(kNvtxTable))) read_nvtx();
  resolve_send_recv();
  link_launches();
  const std::vector<DroppedLaunch> dropped = dropped_launches();
  std::vector<bool> is_gpu(tl_.devices.size(), false);
  for (const auto& [id, index] : gpu_device_) is_gpu[index] = true;
  tl_.sort_spans();
  for (const auto& [n, window] : steps_) tl_.steps.push_back(window);
  extend_steps_by_launches(tl_, report_, dropped);
  mark_comm_lanes(tl_, is_gpu);
  fill_metadata();
  report_.spans_kept = tl_.spans.size();
  return std::move(tl_);
}

void Importer::keep_origin(uint32_t span, std::optional<int64_t> stream,
                           std::optional<int64_t> correlation) {
  if (!options_.keep_origins || (!stream && !correlation)) return;
  SpanOrigin o;
  o.span = span;
  if (stream && *stream >= INT32_MIN && *stream <= INT32_MAX) {
    o.stream = static_cast<int32_t>(*stream);
  }
  if (correlation) o.correlation = *correlation;
  tl_.origins.push_back(o);
}

void Importer::fill_metadata() {
  tl_.metadata["source"] = "nsys";
  tl_.run.source = RunSource::kNsys;
  tl_.metadata["trace_file"] = json_text::valid_utf8(name_);
  if (db_.has_table("TARGET_INFO_SESSION_START_TIME") &&
      db_.has_column("TARGET_INFO_SESSION_START_TIME", "utcEpochNs")) {
    SqliteStatement q(db_.get(), "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
    if (q.step()) {
      if (const auto v = q.integer(0); v && time_in_range(*v)) {
        tl_.metadata["base_time_ns"] = std::to_string(*v);
      }
    }
  }
  if (db_.has_table("TARGET_INFO_GPU") && db_.has_column("TARGET_INFO_GPU", "name")) {
    SqliteStatement q(db_.get(), "SELECT name FROM TARGET_INFO_GPU");
    if (q.step() && !q.text(0).empty()) {
      tl_.run.gpu = json_text::valid_utf8(q.text(0));
      tl_.metadata["gpu"] = tl_.run.gpu;
    }
  }
  note_warnings(tl_, report_);
}

}  // namespace nsys

namespace {

// SQLite's message on one line: a malformed schema's error quotes the schema's SQL, newlines and
// all; its runs of whitespace become one space and it stops after 240 characters.
std::string sqlite_message(const char* what) {
  std::string out;
  const char* c = what;
  for (; *c != '\0' && out.size() < 240; ++c) {
    const bool space = *c == ' ' || *c == '\n' || *c == '\r' || *c == '\t';
    if (!space)
      out += *c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  if (*c != '\0') out += "...";
  return out;
}

// Opens the database with `open` and imports it; SQLite's own errors become ImportErrors.
template <typename Open>
Timeline import_db(const Open& open, const std::string& name, const ImportOptions& options,
                   ImportReport& report) {
  try {
    const SqliteDb db = open();
    return nsys::Importer(db, name, options, report).run();
  } catch (const ImportError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw ImportError(name, "", "SQLite: " + sqlite_message(e.what()));
  }
}

Timeline load_nsys_sqlite(const std::filesystem::path& file, const std::string& name,
                          const ImportOptions& options, ImportReport& report) {
  return import_db([&] { return SqliteDb::open_file(file); }, name, options, report);
}

// The same from the bytes of a database in memory (a gzip-compressed export inflated, a file
// given as bytes).
Timeline load_nsys_sqlite_bytes(std::string_view bytes, const std::string& name,
                                const ImportOptions& options, ImportReport& report) {
  return import_db([&] { return SqliteDb::open_bytes(bytes); }, name, options, report);
}

}  // namespace

// The table's entry (importer_table.cpp): SQLite reads a file (or bytes), not a stream. A
// gzip-compressed export is inflated into memory first, as far as memory allows.
Timeline load_nsys_trace(const TraceInput& in, const ImportOptions& options, ImportReport& report) {
  if (in.opened.gzip) {
    const std::optional<double> available = available_memory_bytes();
    // The database in memory, and SQLite's page cache and the Timeline beside it (assumption:
    // the Timeline of an export takes no more than the export itself; 151 MB for an 81 MB one).
    const double most = available ? *available / 3 : 1e300;
    std::string bytes;
    std::array<char, 1 << 16> chunk;
    while (const size_t n = in.opened.source->read(chunk.data(), chunk.size())) {
      bytes.append(chunk.data(), n);
      if (static_cast<double>(bytes.size()) > most)
        throw ImportError(in.name, "",
                          "a gzip-compressed SQLite file larger inflated than a third of the "
                          "memory available (" +
                              std::to_string(bytes.size() >> 20) +
                              " MiB so far): decompress it first, SQLite then reads it from disk");
    }
    return load_nsys_sqlite_bytes(bytes, in.name, options, report);
  }
  if (in.memory != nullptr) return load_nsys_sqlite_bytes(*in.memory, in.name, options, report);
  // SQLite opens the file again by its path and seeks in it: a pipe, already read from and
  // perhaps closed by its writer, would block that open for ever.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(in.file, ec))
    throw ImportError(in.name, "",
                      "an SQLite export read through a pipe: SQLite needs the file itself (give "
                      "its path)");
  return load_nsys_sqlite(in.file, in.name, options, report);
}

}  // namespace meshscope::traces::importer
