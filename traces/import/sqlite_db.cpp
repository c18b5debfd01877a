// SQLite RAII wrappers: open read-only from a file or from memory, run statements, ask the schema.
#include "traces/import/sqlite_db.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace meshscope::traces::importer {
namespace {

void harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 64 << 20);  // no single string or blob beyond 64 MiB
}

}  // namespace

SqliteStatement::SqliteStatement(sqlite3* db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    throw std::runtime_error(sqlite3_errmsg(db));
  }
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw std::runtime_error(sqlite3_errmsg(db_));
}

std::optional<int64_t> SqliteStatement::integer(int col) const {
  switch (sqlite3_column_type(stmt_, col)) {
    case SQLITE_INTEGER:
      return sqlite3_column_int64(stmt_, col);
    case SQLITE_FLOAT: {
      const double d = sqlite3_column_double(stmt_, col);
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
        return static_cast<int64_t>(d);
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::string_view SqliteStatement::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (p == nullptr) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

SqliteDb SqliteDb::open_file(const std::filesystem::path& file) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK) {
    throw std::runtime_error(raw ? sqlite3_errmsg(raw) : "cannot open the database");
  }
  harden(raw);
  return db;
}

SqliteDb SqliteDb::open_bytes(std::string_view bytes) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    SqliteDb closer(raw);
    throw std::runtime_error("cannot open an in-memory database");
  }
  SqliteDb db(raw);
  harden(raw);
  // SQLite takes ownership of a copy made with its own allocator.
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size() + 1));
  if (copy == nullptr) throw std::runtime_error("out of memory");
  std::memcpy(copy, bytes.data(), bytes.size());
  const int rc = sqlite3_deserialize(raw, "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                                     static_cast<sqlite3_int64>(bytes.size() + 1),
                                     SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(raw));
  return db;
}

bool SqliteDb::has_table(const std::string& table) const {
  SqliteStatement q(db_.get(),
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '" + table + "'");
  return q.step();
}

bool SqliteDb::has_column(const std::string& table, const std::string& column) const {
  SqliteStatement q(
      db_.get(), "SELECT 1 FROM pragma_table_info('" + table + "') WHERE name = '" + column + "'");
  return q.step();
}

}  // namespace meshscope::traces::importer
