// The Nsight Systems importer's insides, shared by the files that read an export's parts:
// nsys_import.cpp (the entry points, the order of the reading, the metadata),
// nsys_import_gpu.cpp (devices and lanes, the GPU activity tables) and nsys_import_host.cpp (CUDA
// runtime calls, NVTX ranges, launch flows, the direction of NCCL SendRecv kernels). Not a public
// interface: the importer table's entry, load_nsys_trace (importer_table.cpp), is.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/chrome_export_text.h"
#include "traces/import/comm_kernels.h"
#include "traces/import/import_common.h"
#include "traces/import/import_types.h"
#include "traces/import/nsys_tables.h"
#include "traces/import/sendrecv_direction.h"
#include "traces/import/sqlite_db.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer::nsys {

inline constexpr int64_t kPidScale = 0x1000000;
inline constexpr std::string_view kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr std::string_view kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kGraphTable = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
inline constexpr std::string_view kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kNvtxTable = "NVTX_EVENTS";

inline constexpr std::array<std::string_view, 4> kGpuTables = {kKernelTable, kMemcpyTable,
                                                               kMemsetTable, kGraphTable};
// CUpti_ActivityGraphTrace2: a deviceId of INT_MAX is a graph that starts on the host.
inline constexpr int64_t kHostDeviceId = INT32_MAX;

// globalTid and globalPid as the nsys documentation decodes them: pid = id / 2^24 % 2^24,
// tid = id % 2^24.
inline int64_t pid_of(int64_t global_id) { return global_id / kPidScale % kPidScale; }
inline int64_t tid_of(int64_t global_id) { return global_id % kPidScale; }

class Importer {
 public:
  Importer(const SqliteDb& db, std::string name, const ImportOptions& options, ImportReport& report)
      : db_(db),
        name_(std::move(name)),
        options_(options),
        comm_rules_(options.comm_kernel_patterns),
        report_(report) {}

  Timeline run();

 private:
  // Column expression, or NULL when this export's table lacks the column.
  std::string col(const std::string& table, const std::string& column) {
    return db_.has_column(table, column) ? table + ".\"" + column + "\"" : "NULL";
  }

  // A GPU row's lane: (deviceId, pid, contextId, streamId); a missing pid or context is -1.
  using GpuLaneKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  static std::optional<GpuLaneKey> gpu_lane_key(const SqliteStatement& q, int device, int pid,
                                                int context, int stream);

  // "stream 7"; where processes or contexts share a GPU and reuse a stream id, which of them:
  // "stream 7 (pid 50922)", "stream 7 (context 2)".
  static std::map<GpuLaneKey, std::string> gpu_lane_names(const std::set<GpuLaneKey>& lanes);

  void make_devices();

  // By (pid, tid): thread ids of different processes can be equal (containers, several hosts).
  std::map<std::pair<int64_t, int64_t>, std::string> read_thread_names();

  // Whether some row of `table` repeats another's stream, times, correlation id and `what` (the
  // name, bytes or graph; an export merged twice, say): asked of SQLite once, so that an export
  // without any pays no memory.
  bool has_repeated_rows(const std::string& table, const std::string& what);

  void read_gpu_table(const std::string& table);

  std::string name_join(const std::string& table, const std::string& id_column) {
    if (!db_.has_table("StringIds") || !db_.has_column(table, id_column)) return "";
    return " LEFT JOIN StringIds AS s ON s.id = " + table + ".\"" + id_column + "\"";
  }
  std::string name_value(const std::string& table, const std::string& id_column) {
    return name_join(table, id_column).empty() ? "NULL" : "s.value";
  }

  // The column expression of a table's rowid, or NULL where it has none (WITHOUT ROWID).
  std::string rowid(const std::string& table) {
    return nsys::has_rowid(db_, table) ? table + ".rowid" : "NULL";
  }

  // CUPTI's stream and correlation ids of a span, for `convert` to write back (keep_origins).
  void keep_origin(uint32_t span, std::optional<int64_t> stream,
                   std::optional<int64_t> correlation);

  // Each row of `q` (columns 0 and 1: start and end) whose interval is valid, as a Span holding it,
  // to on_row(span, where); every row counts as read, an invalid interval as a warning. where():
  // the row's place for warnings, "TABLE rowid N" from column `rowid_column` (as
  // `SELECT * FROM TABLE WHERE rowid = N` finds it), else "TABLE row N" counting the rows read.
  template <typename OnRow>
  void for_each_interval(SqliteStatement& q, const std::string& table, int rowid_column,
                         OnRow&& on_row) {
    int64_t row = 0;
    while (q.step()) {
      ++row;
      ++report_.events_read;
      const auto where = [&] {
        const auto id = q.integer(rowid_column);
        return table + (id ? " rowid " + std::to_string(*id) : " row " + std::to_string(row));
      };
      Span s;
      if (read_interval(q, s, where)) on_row(s, where);
    }
  }

  // start and end as a valid interval, or a counted warning.
  template <typename Where>
  bool read_interval(const SqliteStatement& q, Span& s, const Where& where) {
    const auto begin = q.integer(0);
    const auto end = q.integer(1);
    if (!begin || !end) {
      report_.warn_at(
          q.is_null(0) || q.is_null(1) ? ImportWarning::kMissingField : ImportWarning::kWrongType,
          where());
      return false;
    }
    if (!time_in_range(*begin) || !time_in_range(*end)) {
      report_.warn_at(ImportWarning::kBadNumber, where());
      return false;
    }
    if (*end < *begin) {
      report_.warn_at(ImportWarning::kNegativeDuration, where());
      return false;
    }
    s.begin_ns = *begin;
    s.end_ns = *end;
    return true;
  }

  void read_runtime();

  void read_nvtx();

  // Start/end ranges may overlap their thread's push/pop ranges and each other without nesting,
  // which a thread's stack of slices cannot show: they go to a process's "NVTX start/end" lanes,
  // each range on the first lane free at its start (interval partitioning), so every lane nests.
  void place_start_end_ranges();

  // Each CUDA runtime call's start, globalTid and correlationId, read for what host calls tell
  // also when they are not kept.
  template <typename OnCall>
  void for_each_runtime_call(OnCall&& on_call) {
    const std::string table(kRuntimeTable);
    SqliteStatement q(db_.get(), "SELECT " + col(table, "start") + ", " + col(table, "globalTid") +
                                     ", " + col(table, "correlationId") + " FROM " + table);
    while (q.step()) on_call(q.integer(0), q.integer(1), q.integer(2));
  }

  // Where and when the call that launched each SendRecv kernel ran, also when host calls are not
  // kept.
  void read_sendrecv_launches();

  void note_sendrecv_launch(int64_t global_tid, int64_t correlation, int64_t begin_ns);

  void resolve_send_recv();

  // Why a row's globalTid (column `column`) gave no lane: none, one of the wrong type, or a valid
  // one whose process or thread was past the Timeline's limits.
  static ImportWarning unplaced_thread_warning(const SqliteStatement& q, int column);

  bool place_on_thread(std::optional<int64_t> global_tid, Span& s);

  // Without host events (keep_host false) no flow shows which step launched a GPU activity; the
  // runtime calls' start times, read for that alone, still do.
  std::vector<DroppedLaunch> dropped_launches();

  void link_launches();

  void fill_metadata();

  // SQLite keeps whatever bytes it was given; the Timeline holds valid UTF-8, as JSON can.
  uint32_t intern(std::string_view s) { return tl_.strings.intern(json_text::valid_utf8(s)); }

  struct Launched {
    int64_t pid;
    int64_t correlation;
    uint32_t span;
  };
  struct SendRecvKernel {
    uint32_t span;
    int64_t pid;
    std::optional<int64_t> correlation;
    std::string where;
  };
  const SqliteDb& db_;
  std::string name_;
  ImportOptions options_;
  CommKernelRules comm_rules_;
  std::vector<Span> start_end_;  // NVTX start/end ranges waiting for their lanes
  ImportReport& report_;
  Timeline tl_;
  std::set<std::string> present_;
  std::map<int64_t, uint16_t> gpu_device_, host_device_;
  std::map<GpuLaneKey, uint16_t> gpu_lane_;
  std::map<std::pair<int64_t, int64_t>, uint16_t> host_lane_;
  std::map<std::pair<int64_t, int64_t>, uint32_t> launch_of_;  // (pid, correlationId) -> span
  std::unordered_map<int64_t, uint32_t> launch_by_correlation_;
  std::vector<Launched> launched_;
  std::map<int64_t, StepWindow> steps_;
  std::vector<SendRecvKernel> send_recv_;
  std::set<std::pair<int64_t, int64_t>> sendrecv_correlations_;  // (pid, correlationId)
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> sendrecv_launch_;  // -> tid, t
  SendRecvDirection directions_;
};

}  // namespace meshscope::traces::importer::nsys
