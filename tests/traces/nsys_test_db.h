// An Nsight Systems SQLite export built in a test, with the tables and columns `nsys export
// --type sqlite` writes (the importer tests fill it row by row).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace meshscope::traces::nsys_testing {

inline constexpr int64_t kPid = 4321;
inline constexpr int64_t kTid = 4322;
// nsys serialises ids as pid * 2^24 + tid (plus hardware bits above).
inline constexpr int64_t kGlobalPid = (int64_t{1} << 56) + kPid * 0x1000000;
inline constexpr int64_t kGlobalTid = kGlobalPid + kTid;

class NsysDb {
 public:
  explicit NsysDb(const std::filesystem::path& path) {
    sqlite3_open(path.c_str(), &db_);
    exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
    exec(R"sql(
      CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
        shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER NOT NULL,
        blockX INTEGER NOT NULL);
      CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
        copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);
      CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
      CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
        eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
        nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
      CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
        rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
        endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
      CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
      CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,
        localTime TEXT);
      CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT NOT NULL);
    )sql");
  }
  ~NsysDb() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      ADD_FAILURE() << err << " in " << sql;
      sqlite3_free(err);
    }
  }

 private:
  sqlite3* db_ = nullptr;
};

inline std::string g(int64_t v) { return std::to_string(v); }

}  // namespace meshscope::traces::nsys_testing
