// libFuzzer target: any bytes through the Chrome/Kineto JSON importer (gzip is detected by its
// magic, so compressed inputs reach the inflater too). Only ImportError may come out; anything
// else — a crash, a sanitizer report, another exception — is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "traces/import/load_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope::traces;
  ImportOptions options;
  options.format = "chrome-json";
  options.max_event_bytes = int64_t{1} << 20;  // keep each run small
  options.max_inflated_bytes = int64_t{64} << 20;
  try {
    const Timeline t = load_trace_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.json", options);
    meshscope::fuzz::check_timeline(t);
  } catch (const ImportError&) {
  }
  return 0;
}
