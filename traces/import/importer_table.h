// The importers load_trace hands a file to, in one table. A new trace format is three files: the
// importer itself (traces/import/<format>_import.cpp, defining its entry function), its row in
// importer_table.cpp (with the entry's declaration), and its source line in CMakeLists.txt.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "traces/import/byte_source.h"
#include "traces/import/import_types.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

// What an importer reads: the opened content (gzip undone) and where it came from.
struct TraceInput {
  const std::filesystem::path& file;  // empty when the bytes came from memory
  const std::string_view* memory;     // the raw (possibly gzip) bytes when read from memory
  OpenedTrace& opened;                // the content stream, its first bytes peekable
  const std::string& name;            // for messages
};

struct Importer {
  std::string_view format;  // ImportOptions::format and `--format` name: "chrome-json"
  std::string_view about;   // one line for --help and errors
  // File names a folder scan takes as this format's traces (trace_files_in).
  std::span<const std::string_view> suffixes;
  // True when the first bytes of the (inflated) content are this format's; null for the
  // fallback (the last row), which takes whatever no other row claimed.
  bool (*claims)(std::string_view head) = nullptr;
  size_t head_bytes = 0;  // how many first bytes `claims` needs
  Timeline (*load)(const TraceInput& in, const ImportOptions& options, ImportReport& report);
};

// Every importer, in the order their `claims` are tried; the last row is the fallback.
std::span<const Importer> importers();

// The importer named `format`; nullptr when none is (ImportOptions::format "auto" is not a row).
const Importer* importer_named(std::string_view format);

// The importer for `opened`'s content: by ImportOptions::format, else the first row that claims
// its first bytes, else the fallback. Throws ImportError naming `name` for an unknown format.
const Importer& importer_for(OpenedTrace& opened, const ImportOptions& options,
                             const std::string& name);

}  // namespace meshscope::traces::importer
