// libFuzzer target: any bytes through the Chrome/Kineto JSON importer (gzip is detected by its
// magic, so compressed inputs reach the inflater too). Only ImportError may come out; anything
// else — a crash, a sanitizer report, another exception — is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "traces/import/load_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope::traces;
  ImportOptions options;
  options.format = TraceFormat::kChromeJson;
  options.max_event_bytes = int64_t{1} << 20;  // keep each run small
  options.max_inflated_bytes = int64_t{64} << 20;
  try {
    const Timeline t = load_trace_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.json", options);
    // Whatever came back must be internally consistent.
    for (const Span& s : t.spans) {
      if (s.device >= t.devices.size() || s.lane >= t.devices[s.device].lanes.size() ||
          s.end_ns < s.begin_ns || s.name >= t.strings.size()) {
        __builtin_trap();
      }
    }
    for (const Flow& f : t.flows) {
      if (f.from >= t.spans.size() || f.to >= t.spans.size()) __builtin_trap();
    }
  } catch (const ImportError&) {
  }
  return 0;
}
