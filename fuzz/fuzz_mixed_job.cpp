// libFuzzer target: any bytes as several ranks' files of one job, read together as `analyze
// a.sqlite b.sqlite c.json` reads them (traces::load_traces_bytes): the input's first byte picks
// how the clocks are aligned (its low four bits modulo the ways: none, base time, collective ends)
// and whether ranks follow the files' order (bit 0x10); the rest is cut at each
// "\n@@RANK@@\n" into up to 4 files, each an Nsight Systems SQLite export or a Chrome/Kineto
// JSON trace as its first bytes say. Each file alone is fuzzed by fuzz_nsys_sqlite and
// fuzz_chrome_json; here the merge is: clock alignment by collective ends across ranks (a NCCL
// kernel in one rank's SQLite against one in another's JSON), rank numbering, the pairing of
// transfers. Only ImportError may come out, and what comes out passes fuzz::check_timeline (its
// export reads back as the same Timeline). Seeded with the small SQLite export of fuzz_seeds and
// the Kineto trace beside it, joined (scripts/ci-fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "traces/import/load_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope;
  if (size == 0) return 0;
  traces::ImportOptions options;
  const uint8_t knobs = data[0];
  options.align = static_cast<traces::ClockAlign>((knobs & 0x0f) %
                                                  static_cast<uint8_t>(traces::ClockAlign::kCount));
  options.rank_from_file_order = (knobs & 0x10) != 0;
  options.max_event_bytes = int64_t{1} << 20;  // keep each run small
  options.max_inflated_bytes = int64_t{64} << 20;
  const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<traces::NamedTraceBytes> files = fuzz::split_ranks(all, 4, "");
  try {
    fuzz::check_timeline(traces::load_traces_bytes(files, options));
  } catch (const traces::ImportError&) {
  }
  return 0;
}
