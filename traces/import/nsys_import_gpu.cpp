// Nsight Systems export: devices and lanes, and the GPU activity tables (CUPTI kernels, memcpys,
// memsets, CUDA graphs traced whole) read into spans (nsys_importer.h).
#include <algorithm>
#include <string>

#include "traces/import/nsys_importer.h"

namespace meshscope::traces::importer::nsys {

std::optional<Importer::GpuLaneKey> Importer::gpu_lane_key(const SqliteStatement& q, int device,
                                                           int pid, int context, int stream) {
  const auto d = q.integer(device);
  const auto s = q.integer(stream);
  if (!d || !s || *d == kHostDeviceId) return std::nullopt;
  const auto p = q.integer(pid);
  return GpuLaneKey{*d, p ? pid_of(*p) : -1, q.integer(context).value_or(-1), *s};
}

std::map<Importer::GpuLaneKey, std::string> Importer::gpu_lane_names(
    const std::set<GpuLaneKey>& lanes) {
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
      const bool contexts_differ = std::any_of(
          those.begin(), those.end(), [&](const auto& o) { return o.first == p && o.second != c; });
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

void Importer::make_devices() {
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
      SqliteStatement q(db_.get(), "SELECT DISTINCT " + col(table, "globalTid") + " FROM " + table);
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

std::map<std::pair<int64_t, int64_t>, std::string> Importer::read_thread_names() {
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

bool Importer::has_repeated_rows(const std::string& table, const std::string& what) {
  std::string columns = what;
  for (const char* c :
       {"deviceId", "globalPid", "contextId", "streamId", "start", "end", "correlationId"})
    columns += ", " + col(table, c);
  SqliteStatement q(db_.get(), "SELECT 1 FROM " + table + " GROUP BY " + columns +
                                   " HAVING count(*) > 1 LIMIT 1");
  return q.step();
}

void Importer::read_gpu_table(const std::string& table) {
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
                          ", " + col(table, "contextId") + ", " + rowid(table) + " FROM " + table +
                          (kernel ? name_join(table, name_column) : "");
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
    if (dedupe &&
        !seen.emplace(*key, s.begin_ns, s.end_ns, q.integer(4).value_or(-1), std::string(q.text(6)))
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

}  // namespace meshscope::traces::importer::nsys
