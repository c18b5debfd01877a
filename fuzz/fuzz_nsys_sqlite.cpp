// libFuzzer target: any bytes as an Nsight Systems SQLite export (opened from memory). SQLite
// rejects most mutations of the file format itself; what gets through exercises the importer's
// handling of odd column types, NULLs, huge ids and inconsistent rows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "traces/import/load_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope::traces;
  ImportOptions options;
  options.format = "nsys-sqlite";
  try {
    const Timeline t = load_trace_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.sqlite", options);
    meshscope::fuzz::check_timeline(t);
  } catch (const ImportError&) {
  }
  return 0;
}
