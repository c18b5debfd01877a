// A small RAII layer over SQLite for the Nsight importer: read-only open (file or memory),
// prepared statements with typed column access, and schema questions (table, column exists).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace meshscope::traces::importer {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& sql);  // throws std::runtime_error
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  bool step();  // true while a row is there; throws std::runtime_error on a database error
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  // An INTEGER column; nullopt for NULL, text, blobs or reals that are not whole numbers.
  std::optional<int64_t> integer(int col) const;
  std::string_view text(int col) const;  // "" for NULL

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  // Read-only, with SQLite's defensive mode on and the schema untrusted (no functions from it).
  static SqliteDb open_file(const std::filesystem::path& file);
  static SqliteDb open_bytes(std::string_view bytes);

  sqlite3* get() const { return db_.get(); }
  bool has_table(const std::string& table) const;  // a real table, not a view
  bool has_column(const std::string& table, const std::string& column) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace meshscope::traces::importer
