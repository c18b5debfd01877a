// Nsight Systems export tables beside those the importer reads (nsys_tables.h).
#include "traces/import/nsys_tables.h"

#include <array>
#include <map>
#include <stdexcept>
#include <vector>

namespace meshscope::traces::importer::nsys {
namespace {

// CUPTI_ACTIVITY_MEMCPY_KIND_* in order (cupti_activity.h), then the unified-memory kinds the
// export's ENUM_CUDA_MEMCPY_OPER adds (CUDA_MEMCPY_KIND_UVM_HTOD, _DTOH, _DTOD: 11, 12, 13).
constexpr std::array<std::string_view, 14> kCopyKinds = {
    "Memcpy",      "Memcpy HtoD",     "Memcpy DtoH",     "Memcpy HtoA",    "Memcpy AtoH",
    "Memcpy AtoA", "Memcpy AtoD",     "Memcpy DtoA",     "Memcpy DtoD",    "Memcpy HtoH",
    "Memcpy PtoP", "Memcpy UVM HtoD", "Memcpy UVM DtoH", "Memcpy UVM DtoD"};

// NVTX_EVENTS rows that are no event on a timeline: category, thread and domain names
// (NvtxCategory 33, NvtxThread 39, NvtxtCategory 64, NvtxtMeta* 72..74, NvtxDomainCreate /
// Destroy 75, 76).
bool is_nvtx_metadata(int64_t t) { return t == 33 || t == 39 || t == 64 || (t >= 72 && t <= 76); }
bool is_nvtx_mark(int64_t t) { return t == 34 || t == 65; }  // NvtxMark, NvtxtMark

bool is_event_table(const std::string& t) {
  return t.starts_with("CUPTI_ACTIVITY_KIND_") || t == "OSRT_API" || t == "CUDNN_EVENTS" ||
         t == "CUBLAS_EVENTS" || t.starts_with("MPI_") || t.starts_with("CUDA_UM_") ||
         t == "CUDA_GPU_MEMORY_USAGE_EVENTS";
}

// The export's own names of its NVTX event types (ENUM_NSYS_EVENT_TYPE), where it has them.
std::map<int64_t, std::string> event_type_names(const SqliteDb& db) {
  std::map<int64_t, std::string> names;
  if (!db.has_table("ENUM_NSYS_EVENT_TYPE") || !db.has_column("ENUM_NSYS_EVENT_TYPE", "name"))
    return names;
  SqliteStatement q(db.get(), "SELECT id, name FROM ENUM_NSYS_EVENT_TYPE");
  while (q.step()) {
    if (const auto id = q.integer(0)) names[*id] = std::string(q.text(1));
  }
  return names;
}

}  // namespace

bool is_push_pop(int64_t t) { return t == kNvtxPushPopRange || t == kNvtxtPushPopRange; }
bool is_start_end(int64_t t) { return t == kNvtxStartEndRange || t == kNvtxtStartEndRange; }

std::string_view copy_kind_name(int64_t kind) {
  return kind >= 0 && kind < static_cast<int64_t>(kCopyKinds.size())
             ? kCopyKinds[static_cast<size_t>(kind)]
             : kCopyKinds[0];
}

std::string sql_name(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

bool has_rowid(const SqliteDb& db, const std::string& table) {
  try {
    SqliteStatement probe(db.get(), "SELECT rowid FROM " + sql_name(table) + " LIMIT 0");
    return true;
  } catch (const std::runtime_error&) {
    return false;  // WITHOUT ROWID: warnings count rows instead
  }
}

void count_rows_not_read(const SqliteDb& db, const std::set<std::string>& read_tables,
                         ImportReport& report) {
  SqliteStatement tables(db.get(),
                         "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  std::vector<std::string> names;
  while (tables.step()) names.emplace_back(tables.text(0));
  std::string which;  // "OSRT_API 1831 rows, ..."
  int64_t total = 0;
  const auto add = [&](const std::string& what, int64_t n) {
    which +=
        (which.empty() ? "" : ", ") + what + " " + std::to_string(n) + (n == 1 ? " row" : " rows");
    total += n;
  };
  for (const std::string& t : names) {
    if (!is_event_table(t) || read_tables.count(t)) continue;
    SqliteStatement rows(db.get(), "SELECT count(*) FROM " + sql_name(t));
    if (const int64_t n = rows.step() ? rows.integer(0).value_or(0) : 0; n > 0) add(t, n);
  }
  if (read_tables.count("NVTX_EVENTS") && db.has_column("NVTX_EVENTS", "eventType")) {
    const std::map<int64_t, std::string> type_names = event_type_names(db);
    SqliteStatement q(db.get(),
                      "SELECT eventType, count(*) FROM NVTX_EVENTS GROUP BY eventType ORDER BY 1");
    while (q.step()) {
      const auto type = q.integer(0);
      const int64_t n = q.integer(1).value_or(0);
      if (!type || is_push_pop(*type) || is_start_end(*type) || is_nvtx_metadata(*type)) continue;
      if (is_nvtx_mark(*type)) {
        report.warn_at(ImportWarning::kUnsupportedPhase, "NVTX_EVENTS marks",
                       static_cast<uint64_t>(n));
        continue;
      }
      const auto name = type_names.find(*type);
      add("NVTX_EVENTS " +
              (name != type_names.end() ? name->second : "eventType " + std::to_string(*type)),
          n);
    }
  }
  if (total > 0)
    report.warn_at(ImportWarning::kNsysTableNotRead, which, static_cast<uint64_t>(total));
}

}  // namespace meshscope::traces::importer::nsys
