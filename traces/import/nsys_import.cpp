// Placeholder until the SQLite importer lands.
#include "traces/import/nsys_import.h"

namespace meshscope::traces::importer {

Timeline load_nsys_sqlite(const std::filesystem::path&, const std::string& name,
                          const ImportOptions&, ImportReport&) {
  throw ImportError(name, "", "Nsight Systems SQLite import is not built yet");
}
Timeline load_nsys_sqlite_bytes(std::string_view, const std::string& name, const ImportOptions&,
                                ImportReport&) {
  throw ImportError(name, "", "Nsight Systems SQLite import is not built yet");
}

}  // namespace meshscope::traces::importer
