// The table of importers (see importer_table.h): one row per trace format.
#include "traces/import/importer_table.h"

#include <algorithm>
#include <array>

namespace meshscope::traces::importer {

// Each importer's entry, defined in its own file.
Timeline load_nsys_trace(const TraceInput& in, const ImportOptions& options, ImportReport& report);
Timeline load_chrome_trace(const TraceInput& in, const ImportOptions& options,
                           ImportReport& report);

namespace {

constexpr std::array<std::string_view, 4> kNsysSuffixes = {".sqlite", ".db", ".sqlite.gz",
                                                           ".db.gz"};
constexpr std::array<std::string_view, 2> kChromeSuffixes = {".json", ".json.gz"};

const std::array<Importer, 2> kImporters = {{
    {"nsys-sqlite", "Nsight Systems SQLite export (nsys export --type sqlite)", kNsysSuffixes,
     has_sqlite_magic, kSqliteMagic.size(), load_nsys_trace},
    // The fallback: Chrome Trace Event Format JSON (Kineto, meshscope's own export, Perfetto).
    {"chrome-json", "Chrome Trace Event Format JSON (Kineto / PyTorch profiler, Perfetto)",
     kChromeSuffixes, nullptr, 0, load_chrome_trace},
}};

}  // namespace

std::span<const Importer> importers() { return kImporters; }

const Importer* importer_named(std::string_view format) {
  const auto it = std::find_if(kImporters.begin(), kImporters.end(),
                               [&](const Importer& i) { return i.format == format; });
  return it == kImporters.end() ? nullptr : &*it;
}

const Importer& importer_for(OpenedTrace& opened, const ImportOptions& options,
                             const std::string& name) {
  if (options.format != kAutoFormat) {
    if (const Importer* named = importer_named(options.format)) return *named;
    std::string known;
    for (const Importer& i : kImporters)
      known += (known.empty() ? "" : ", ") + std::string(i.format);
    throw ImportError(name, "", "unknown trace format '" + options.format + "' (" + known + ")");
  }
  for (const Importer& i : kImporters) {
    if (i.claims == nullptr || i.claims(opened.source->peek(i.head_bytes))) return i;
    // Named as this format's files are, but without its first bytes: say so, not what the
    // fallback would make of the bytes ("not a Chrome trace").
    for (const std::string_view suffix : i.suffixes) {
      if (name.ends_with(suffix))
        throw ImportError(name, "",
                          "its name (" + std::string(suffix) + ") says " + std::string(i.about) +
                              ", but its first bytes are not that format's: a damaged file, or "
                              "another format under that name");
    }
  }
  return kImporters.back();
}

}  // namespace meshscope::traces::importer
