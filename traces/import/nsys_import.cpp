// Nsight Systems SQLite -> Timeline. GPU activity (CUPTI kernel, memcpy, memset tables, and CUDA
// graphs traced whole) goes to one device per deviceId with a lane per stream of a process and
// context (CUPTI's streamId is unique within a context only); CUDA runtime calls and NVTX ranges
// go to one host device per process with a lane per thread (pid/tid decoded from globalTid as the
// nsys documentation says: pid = globalTid / 2^24 % 2^24, tid = globalTid % 2^24). Launch flows
// join runtime calls to the GPU work with the same (process, correlationId). NCCL SendRecv kernels
// get their direction from the NVTX ranges around their launch (sendrecv_direction.h).
#include "traces/import/nsys_import.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "traces/chrome_export_text.h"
#include "traces/host_memory.h"
#include "traces/import/comm_kernels.h"
#include "traces/import/import_common.h"
#include "traces/import/importer_table.h"
#include "traces/import/kineto_names.h"
#include "traces/import/nsys_tables.h"
#include "traces/import/sendrecv_direction.h"
#include "traces/import/sqlite_db.h"

namespace meshscope::traces::importer {
namespace {

constexpr int64_t kPidScale = 0x1000000;
constexpr std::string_view kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr std::string_view kMemcpyTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr std::string_view kMemsetTable = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr std::string_view kGraphTable = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
constexpr std::string_view kRuntimeTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr std::string_view kNvtxTable = "NVTX_EVENTS";

constexpr std::array<std::string_view, 4> kGpuTables = {kKernelTable, kMemcpyTable, kMemsetTable,
                                                        kGraphTable};
// CUpti_ActivityGraphTrace2: a deviceId of INT_MAX is a graph that starts on the host.
constexpr int64_t kHostDeviceId = INT32_MAX;

int64_t pid_of(int64_t global_id) { return global_id / kPidScale % kPidScale; }
int64_t tid_of(int64_t global_id) { return global_id % kPidScale; }

class NsysImporter {
 public:
  NsysImporter(const SqliteDb& db, std::string name, const ImportOptions& options,
               ImportReport& report)
      : db_(db),
        name_(std::move(name)),
        options_(options),
        comm_rules_(options.comm_kernel_patterns),
        report_(report) {}

  Timeline run() {
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

 private:
  // Column expression, or NULL when this export's table lacks the column.
  std::string col(const std::string& table, const std::string& column) {
    return db_.has_column(table, column) ? table + ".\"" + column + "\"" : "NULL";
  }

  // A GPU row's lane: (deviceId, pid, contextId, streamId); a missing pid or context is -1.
  using GpuLaneKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  static std::optional<GpuLaneKey> gpu_lane_key(const SqliteStatement& q, int device, int pid,
                                                int context, int stream) {
    const auto d = q.integer(device);
    const auto s = q.integer(stream);
    if (!d || !s || *d == kHostDeviceId) return std::nullopt;
    const auto p = q.integer(pid);
    return GpuLaneKey{*d, p ? pid_of(*p) : -1, q.integer(context).value_or(-1), *s};
  }

  // "stream 7"; where processes or contexts share a GPU and reuse a stream id, which of them:
  // "stream 7 (pid 50922)", "stream 7 (context 2)".
  static std::map<GpuLaneKey, std::string> gpu_lane_names(const std::set<GpuLaneKey>& lanes) {
    std::map<std::pair<int64_t, int64_t>, std::set<std::pair<int64_t, int64_t>>> owners;
    for (const auto& [d, p, c, s] : lanes) owners[{d, s}].emplace(p, c);
    std::map<GpuLaneKey, std::string> names;
    for (const auto& key : lanes) {
      // Named, not bound: clang before 16 cannot capture a structured binding in a lambda.
      const int64_t d = std::get<0>(key), p = std::get<1>(key), c = std::get<2>(key),
                    s = std::get<3>(key);
      const auto& those = owners[{d, s}];
      std::string name = "stream " + std::to_string(s);
      if (those.size() > 1) {
        const bool pids_differ = those.begin()->first != those.rbegin()->first;
        const bool contexts_differ = std::any_of(those.begin(), those.end(), [&](const auto& o) {
          return o.first == p && o.second != c;
        });
        std::string who;
        if (pids_differ) who = "pid " + std::to_string(p);
        if (contexts_differ)
          who += (who.empty() ? "" : ", ") + std::string("context ") + std::to_string(c);
        name += " (" + who + ")";
      }
      names[key] = name;
    }
    return names;
  }

  void make_devices() {
    std::set<GpuLaneKey> gpu_lanes;
    for (std::string_view t : kGpuTables) {
      const std::string table(t);
      if (!present_.count(table)) continue;
      SqliteStatement q(db_.get(), "SELECT DISTINCT " + col(table, "deviceId") + ", " +
                                       col(table, "globalPid") + ", " + col(table, "contextId") +
                                       ", " + col(table, "streamId") + " FROM " + table);
      while (q.step()) {
        if (const auto key = gpu_lane_key(q, 0, 1, 2, 3)) gpu_lanes.insert(*key);
      }
    }
    std::set<std::pair<int64_t, int64_t>> host_lanes;
    if (options_.keep_host) {
      for (std::string_view t : {kRuntimeTable, kNvtxTable}) {
        const std::string table(t);
        if (!present_.count(table)) continue;
        SqliteStatement q(db_.get(),
                          "SELECT DISTINCT " + col(table, "globalTid") + " FROM " + table);
        while (q.step()) {
          if (const auto g = q.integer(0)) host_lanes.emplace(pid_of(*g), tid_of(*g));
        }
      }
    }
    const auto thread_names = read_thread_names();
    const auto lane_names = gpu_lane_names(gpu_lanes);
    for (const GpuLaneKey& key : gpu_lanes) {
      const int64_t device = std::get<0>(key);
      auto [it, fresh] = gpu_device_.try_emplace(device, 0);
      if (fresh) {
        if (tl_.devices.size() >= UINT16_MAX) {
          report_.warn_at(ImportWarning::kTooManyDevicesOrLanes, "GPU " + std::to_string(device));
          gpu_device_.erase(it);
          continue;
        }
        it->second = tl_.add_device(static_cast<int>(device), "GPU " + std::to_string(device));
      }
      if (tl_.devices[it->second].lanes.size() >= UINT16_MAX) continue;
      gpu_lane_[key] = tl_.add_lane(it->second, lane_names.at(key), LaneKind::kCompute);
    }
    std::set<int64_t> pids;
    for (const auto& [pid, tid] : host_lanes) pids.insert(pid);
    for (const auto& [pid, tid] : host_lanes) {
      auto [it, fresh] = host_device_.try_emplace(pid, 0);
      if (fresh) {
        if (tl_.devices.size() >= UINT16_MAX) {
          host_device_.erase(it);
          continue;
        }
        it->second = tl_.add_device(
            0, pids.size() > 1 ? "host pid " + std::to_string(pid) : std::string("host"));
      }
      if (tl_.devices[it->second].lanes.size() >= UINT16_MAX) continue;
      const auto name = thread_names.find({pid, tid});
      host_lane_[{pid, tid}] = tl_.add_lane(
          it->second, name != thread_names.end() ? name->second : "thread " + std::to_string(tid),
          LaneKind::kHost);
    }
  }

  // By (pid, tid): thread ids of different processes can be equal (containers, several hosts).
  std::map<std::pair<int64_t, int64_t>, std::string> read_thread_names() {
    std::map<std::pair<int64_t, int64_t>, std::string> names;
    if (!db_.has_table("ThreadNames") || !db_.has_table("StringIds")) return names;
    SqliteStatement q(db_.get(),
                      "SELECT t.globalTid, s.value FROM ThreadNames AS t JOIN StringIds AS s ON "
                      "s.id = t.nameId");
    while (q.step()) {
      if (const auto g = q.integer(0)) {
        names[{pid_of(*g), tid_of(*g)}] =
            json_text::valid_utf8(q.text(1)) + " (" + std::to_string(tid_of(*g)) + ")";
      }
    }
    return names;
  }

  std::string name_join(const std::string& table, const std::string& id_column) {
    if (!db_.has_table("StringIds") || !db_.has_column(table, id_column)) return "";
    return " LEFT JOIN StringIds AS s ON s.id = " + table + ".\"" + id_column + "\"";
  }
  std::string name_value(const std::string& table, const std::string& id_column) {
    return name_join(table, id_column).empty() ? "NULL" : "s.value";
  }

  // Whether some row of `table` repeats another's stream, times, correlation id and `what` (the
  // name, bytes or graph; an export merged twice, say): asked of SQLite once, so that an export
  // without any pays no memory.
  bool has_repeated_rows(const std::string& table, const std::string& what) {
    std::string columns = what;
    for (const char* c :
         {"deviceId", "globalPid", "contextId", "streamId", "start", "end", "correlationId"})
      columns += ", " + col(table, c);
    SqliteStatement q(db_.get(), "SELECT 1 FROM " + table + " GROUP BY " + columns +
                                     " HAVING count(*) > 1 LIMIT 1");
    return q.step();
  }

  void read_gpu_table(const std::string& table) {
    const bool kernel = table == kKernelTable;
    const bool memcpy = table == kMemcpyTable;
    const bool graph = table == kGraphTable;
    std::string name_column = "shortName";
    for (const char* c : {"demangledName", "shortName", "mangledName"}) {
      if (db_.has_column(table, c)) {
        name_column = c;
        break;
      }
    }
    const std::string sixth = kernel  ? name_value(table, name_column)
                              : graph ? col(table, "graphId")
                                      : col(table, "bytes");
    const std::string sql = "SELECT " + col(table, "start") + ", " + col(table, "end") + ", " +
                            col(table, "deviceId") + ", " + col(table, "streamId") + ", " +
                            col(table, "correlationId") + ", " + col(table, "globalPid") + ", " +
                            sixth + ", " + (memcpy ? col(table, "copyKind") : std::string("NULL")) +
                            ", " + col(table, "contextId") + ", " + rowid(table) + " FROM " +
                            table + (kernel ? name_join(table, name_column) : "");
    // Rows seen, where some repeat: lane, start, end, correlation and what the row names.
    std::set<std::tuple<GpuLaneKey, int64_t, int64_t, int64_t, std::string>> seen;
    const bool dedupe = has_repeated_rows(
        table, kernel ? col(table, name_column) : col(table, graph ? "graphId" : "bytes"));
    SqliteStatement q(db_.get(), sql);
    for_each_interval(q, table, 9, [&](Span s, const auto& where) {
      const auto key = gpu_lane_key(q, 2, 5, 8, 3);
      const auto lane = key ? gpu_lane_.find(*key) : gpu_lane_.end();
      if (lane == gpu_lane_.end()) {
        // Valid ids without a lane: the device (or stream) was past the Timeline's limits. A
        // graph that starts on the host has no device.
        const bool host_graph = q.integer(2) == kHostDeviceId;
        report_.warn_at(q.is_null(2) || q.is_null(3) || host_graph ? ImportWarning::kMissingField
                        : key ? ImportWarning::kTooManyDevicesOrLanes
                              : ImportWarning::kWrongType,
                        where());
        return;
      }
      if (graph && s.begin_ns == 0 && s.end_ns == 0) {  // CUPTI: no time stamps collected
        report_.warn_at(ImportWarning::kMissingField, where());
        return;
      }
      if (dedupe && !seen.emplace(*key, s.begin_ns, s.end_ns, q.integer(4).value_or(-1),
                                  std::string(q.text(6)))
                         .second) {
        report_.warn_at(ImportWarning::kDuplicateActivity, where());
        return;
      }
      s.device = gpu_device_.at(std::get<0>(*key));
      s.lane = lane->second;
      if (kernel) {
        const std::string_view name = q.text(6);
        if (name.empty()) report_.warn_at(ImportWarning::kUnnamedKernel, where());
        s.name = intern(name);
        const CommOp comm = comm_rules_.classify(name).op;
        s.kind = comm == CommOp::kNone ? SpanKind::kCompute : span_kind_of(comm);
        if (comm == CommOp::kSendRecv) {
          send_recv_.push_back({static_cast<uint32_t>(tl_.spans.size()),
                                q.integer(5) ? pid_of(*q.integer(5)) : -1, q.integer(4), where()});
        }
      } else if (graph) {
        // Its nodes are not in the export: compute as far as anything here can tell.
        report_.warn_at(ImportWarning::kNsysWholeGraphs, where());
        s.kind = SpanKind::kCompute;
        const auto id = q.integer(6);
        s.name = intern(id ? "CUDA graph " + std::to_string(*id) : std::string("CUDA graph"));
      } else if (memcpy) {
        s.kind = SpanKind::kMemcpy;
        s.name = intern(nsys::copy_kind_name(q.integer(7).value_or(0)));
        s.bytes = std::max<int64_t>(0, q.integer(6).value_or(0));
      } else {
        s.kind = SpanKind::kMemset;
        s.name = intern("Memset");
        s.bytes = std::max<int64_t>(0, q.integer(6).value_or(0));
      }
      const uint32_t index = tl_.add_span(s);
      keep_origin(index, std::get<3>(*key), q.integer(4));
      if (const auto corr = q.integer(4)) launched_.push_back({std::get<1>(*key), *corr, index});
    });
  }

  // The column expression of a table's rowid, or NULL where it has none (WITHOUT ROWID).
  std::string rowid(const std::string& table) {
    return nsys::has_rowid(db_, table) ? table + ".rowid" : "NULL";
  }

  // CUPTI's stream and correlation ids of a span, for `convert` to write back (keep_origins).
  void keep_origin(uint32_t span, std::optional<int64_t> stream,
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

  void read_runtime() {
    const std::string table(kRuntimeTable);
    if (!options_.keep_host) {
      SqliteStatement count(db_.get(), "SELECT count(*) FROM " + table);
      if (count.step()) {
        report_.warn_at(ImportWarning::kHostDropped, table,
                        static_cast<uint64_t>(count.integer(0).value_or(0)));
      }
      if (!send_recv_.empty()) read_sendrecv_launches();
      return;
    }
    SqliteStatement q(db_.get(), "SELECT " + col(table, "start") + ", " + col(table, "end") + ", " +
                                     col(table, "globalTid") + ", " + col(table, "correlationId") +
                                     ", " + name_value(table, "nameId") + ", " + rowid(table) +
                                     " FROM " + table + name_join(table, "nameId"));
    for_each_interval(q, table, 5, [&](Span s, const auto& where) {
      if (!place_on_thread(q.integer(2), s)) {
        report_.warn_at(unplaced_thread_warning(q, 2), where());
        return;
      }
      s.kind = SpanKind::kHost;
      // Without its name a call's category (cuda_runtime, cuda_driver) is lost too.
      if (q.text(4).empty()) report_.warn_at(ImportWarning::kUnnamedHostCall, where());
      s.name = intern(q.text(4));
      const uint32_t index = tl_.add_span(s);
      keep_origin(index, std::nullopt, q.integer(3));
      if (const auto corr = q.integer(3)) {
        if (launch_of_.count({pid_of(*q.integer(2)), *corr}))
          report_.warn_at(ImportWarning::kDuplicateLaunch, where());
        launch_of_[{pid_of(*q.integer(2)), *corr}] = index;
        launch_by_correlation_[*corr] = index;
        note_sendrecv_launch(*q.integer(2), *corr, s.begin_ns);
      }
    });
  }

  void read_nvtx() {
    const std::string table(kNvtxTable);
    const bool text_ids = db_.has_column(table, "textId") && db_.has_table("StringIds");
    const std::string text = db_.has_column(table, "text") ? table + ".\"text\"" : "NULL";
    SqliteStatement q(db_.get(), "SELECT " + col(table, "start") + ", " + col(table, "end") + ", " +
                                     col(table, "globalTid") + ", " +
                                     (text_ids ? "COALESCE(" + text + ", s.value)" : text) + ", " +
                                     col(table, "eventType") + ", " + rowid(table) + " FROM " +
                                     table + (text_ids ? name_join(table, "textId") : "") +
                                     " WHERE " + col(table, "eventType") + " IN (" +
                                     std::to_string(nsys::kNvtxPushPopRange) + ", " +
                                     std::to_string(nsys::kNvtxStartEndRange) + ", " +
                                     std::to_string(nsys::kNvtxtPushPopRange) + ", " +
                                     std::to_string(nsys::kNvtxtStartEndRange) + ")");
    // An unended range has a NULL end: a warning, not a span.
    for_each_interval(q, table, 5, [&](Span s, const auto& where) {
      const std::string_view name = q.text(3);
      if (const auto tid = q.integer(2); tid && !send_recv_.empty()) {
        directions_.add_range(*tid, s.begin_ns, s.end_ns, name);
      }
      if (const auto n = profiler_step_number(name)) {
        auto [it, fresh] = steps_.try_emplace(*n, StepWindow{s.begin_ns, s.end_ns});
        if (!fresh) {
          it->second.begin_ns = std::min(it->second.begin_ns, s.begin_ns);
          it->second.end_ns = std::max(it->second.end_ns, s.end_ns);
        }
      } else if (is_unnumbered_profiler_step(name)) {
        report_.warn_at(ImportWarning::kUnnumberedStep, where());
      }
      if (!options_.keep_host) {
        report_.warn_at(ImportWarning::kHostDropped, where());
        return;
      }
      if (!place_on_thread(q.integer(2), s)) {
        report_.warn_at(unplaced_thread_warning(q, 2), where());
        return;
      }
      s.kind = SpanKind::kAnnotation;
      s.name = intern(name);
      if (nsys::is_start_end(q.integer(4).value_or(0))) {
        start_end_.push_back(s);  // placed below, off the push/pop stacks
        return;
      }
      tl_.add_span(s);
    });
    place_start_end_ranges();
  }

  // Start/end ranges may overlap their thread's push/pop ranges and each other without nesting,
  // which a thread's stack of slices cannot show: they go to a process's "NVTX start/end" lanes,
  // each range on the first lane free at its start (interval partitioning), so every lane nests.
  void place_start_end_ranges() {
    std::stable_sort(start_end_.begin(), start_end_.end(),
                     [](const Span& a, const Span& b) { return a.begin_ns < b.begin_ns; });
    std::map<uint16_t, std::vector<std::pair<uint16_t, int64_t>>> lanes;  // device -> (lane, end)
    for (Span s : start_end_) {
      auto& free = lanes[s.device];
      auto it = std::find_if(free.begin(), free.end(),
                             [&](const auto& l) { return l.second <= s.begin_ns; });
      if (it == free.end()) {
        if (tl_.devices[s.device].lanes.size() >= UINT16_MAX) {
          report_.warn_at(ImportWarning::kTooManyDevicesOrLanes, "NVTX start/end ranges");
          continue;
        }
        const uint16_t lane = tl_.add_lane(
            s.device, "NVTX start/end " + std::to_string(free.size()), LaneKind::kHost);
        free.emplace_back(lane, s.end_ns);
        it = std::prev(free.end());
      }
      it->second = s.end_ns;
      s.lane = it->first;
      tl_.add_span(s);
    }
    start_end_.clear();
  }

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
  void read_sendrecv_launches() {
    for_each_runtime_call(
        [&](std::optional<int64_t> start, std::optional<int64_t> tid, std::optional<int64_t> corr) {
          if (start && tid && corr) note_sendrecv_launch(*tid, *corr, *start);
        });
  }

  void note_sendrecv_launch(int64_t global_tid, int64_t correlation, int64_t begin_ns) {
    if (sendrecv_correlations_.empty()) return;
    const std::pair key{pid_of(global_tid), correlation};
    if (sendrecv_correlations_.count(key)) sendrecv_launch_[key] = {global_tid, begin_ns};
  }

  void resolve_send_recv() {
    for (const SendRecvKernel& k : send_recv_) {
      CommOp op = CommOp::kSendRecv;
      if (k.correlation) {
        const auto launch = sendrecv_launch_.find({k.pid, *k.correlation});
        if (launch != sendrecv_launch_.end()) {
          op = directions_.direction(launch->second.first, launch->second.second);
        }
      }
      if (op == CommOp::kSendRecv) {
        report_.warn_at(ImportWarning::kSendRecvDirection, k.where);
      } else {
        tl_.spans[k.span].kind = span_kind_of(op);
      }
    }
  }

  // Why a row's globalTid (column `column`) gave no lane: none, one of the wrong type, or a valid
  // one whose process or thread was past the Timeline's limits.
  static ImportWarning unplaced_thread_warning(const SqliteStatement& q, int column) {
    if (q.is_null(column)) return ImportWarning::kMissingField;
    return q.integer(column) ? ImportWarning::kTooManyDevicesOrLanes : ImportWarning::kWrongType;
  }

  bool place_on_thread(std::optional<int64_t> global_tid, Span& s) {
    if (!global_tid) return false;
    const auto lane = host_lane_.find({pid_of(*global_tid), tid_of(*global_tid)});
    if (lane == host_lane_.end()) return false;
    s.device = host_device_.at(pid_of(*global_tid));
    s.lane = lane->second;
    return true;
  }

  // Without host events (keep_host false) no flow shows which step launched a GPU activity; the
  // runtime calls' start times, read for that alone, still do.
  std::vector<DroppedLaunch> dropped_launches() {
    std::vector<DroppedLaunch> out;
    const std::string table(kRuntimeTable);
    if (options_.keep_host || steps_.empty() || !present_.count(table)) return out;
    std::map<std::pair<int64_t, int64_t>, uint32_t> launched;  // (pid, correlationId) -> span
    std::unordered_map<int64_t, uint32_t> launched_without_pid;
    for (const Launched& l : launched_) {
      if (l.pid >= 0)
        launched.emplace(std::pair{l.pid, l.correlation}, l.span);
      else
        launched_without_pid.emplace(l.correlation, l.span);
    }
    for_each_runtime_call(
        [&](std::optional<int64_t> start, std::optional<int64_t> tid, std::optional<int64_t> corr) {
          if (!start || !corr || !time_in_range(*start)) return;
          std::optional<uint32_t> span;
          if (const auto it = tid ? launched.find({pid_of(*tid), *corr}) : launched.end();
              it != launched.end()) {
            span = it->second;
          } else if (const auto any = launched_without_pid.find(*corr);
                     any != launched_without_pid.end()) {
            span = any->second;
          }
          if (!span) return;
          const Span& s = tl_.spans[*span];
          out.push_back({*start, s.begin_ns, s.end_ns, s.name});
        });
    return out;
  }

  void link_launches() {
    for (const Launched& l : launched_) {
      auto it = launch_of_.find({l.pid, l.correlation});
      if (it != launch_of_.end()) {
        tl_.add_flow(it->second, l.span);
      } else if (l.pid < 0) {
        const auto any = launch_by_correlation_.find(l.correlation);
        if (any != launch_by_correlation_.end()) tl_.add_flow(any->second, l.span);
      }
    }
  }

  void fill_metadata() {
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
      if (q.step() && !q.text(0).empty()) tl_.metadata["gpu"] = json_text::valid_utf8(q.text(0));
    }
    note_warnings(tl_, report_);
  }

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
    return NsysImporter(db, name, options, report).run();
  } catch (const ImportError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw ImportError(name, "", "SQLite: " + sqlite_message(e.what()));
  }
}

}  // namespace

Timeline load_nsys_sqlite(const std::filesystem::path& file, const std::string& name,
                          const ImportOptions& options, ImportReport& report) {
  return import_db([&] { return SqliteDb::open_file(file); }, name, options, report);
}

Timeline load_nsys_sqlite_bytes(std::string_view bytes, const std::string& name,
                                const ImportOptions& options, ImportReport& report) {
  return import_db([&] { return SqliteDb::open_bytes(bytes); }, name, options, report);
}

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
