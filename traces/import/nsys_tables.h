// What an Nsight Systems export holds around the tables the importer reads (nsys_importer.h): the
// names of its enumerations, the rows it leaves out (counted, so that a converted file says what it
// lacks), and SQL names for the tables it only finds by listing them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "traces/import/import_types.h"
#include "traces/import/sqlite_db.h"

namespace meshscope::traces::importer::nsys {

// NVTX_EVENTS.eventType values (the export's ENUM_NSYS_EVENT_TYPE): the ranges read as spans.
inline constexpr int kNvtxPushPopRange = 59;
inline constexpr int kNvtxStartEndRange = 60;
inline constexpr int kNvtxtPushPopRange = 70;  // NVTXT: ranges nsys imported from a text file
inline constexpr int kNvtxtStartEndRange = 71;

bool is_push_pop(int64_t event_type);
bool is_start_end(int64_t event_type);

// A memcpy's name from its copyKind (CUPTI_ACTIVITY_MEMCPY_KIND_*, the export's
// ENUM_CUDA_MEMCPY_OPER: 11..13 are unified memory's): "Memcpy HtoD", "Memcpy UVM DtoH"; an
// unknown kind is "Memcpy".
std::string_view copy_kind_name(int64_t kind);

// `name` as an SQL identifier: in double quotes, a quote inside doubled.
std::string sql_name(std::string_view name);

// Whether `table` can be asked for its rowid (a real table, not WITHOUT ROWID): warnings then
// name the row as `SELECT * FROM table WHERE rowid = N` finds it.
bool has_rowid(const SqliteDb& db, const std::string& table);

// Counts into `report` what the importer does not read: rows of event tables other than
// `read_tables` (OS runtime calls, CUDA synchronization, cuDNN, cuBLAS, MPI, unified memory,
// other CUPTI activity kinds) and NVTX events of kinds that are neither ranges nor metadata
// (marks count as instant events, as a Chrome trace's do).
void count_rows_not_read(const SqliteDb& db, const std::set<std::string>& read_tables,
                         ImportReport& report);

}  // namespace meshscope::traces::importer::nsys
