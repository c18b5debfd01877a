// libFuzzer target: any bytes as a hand-written JSON file through traces::parse_json_text, and
// what parses through the readers that take it apart: a hardware file (cost::parse_hardware), a
// framework profile (cost::parse_framework) and a calibration (cost::parse_calibration: what a
// calibration it accepts prints back must read back the same). Only std::runtime_error naming the
// file may come out; anything else (a crash, a sanitizer report such as a double converted to an
// int it does not fit, nlohmann's own exception, a recursion that overflows the stack) is a bug.
// Seeded with the catalog entries, framework profiles and configs the project ships
// (scripts/ci-fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_check.h"
#include "sim/cost/calibration.h"
#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "traces/json_file.h"

using meshscope::fuzz::located_or_nothing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  bool parsed = false;
  located_or_nothing([&] {
    j = meshscope::traces::parse_json_text(text, "fuzz.json");
    parsed = true;
  });
  if (!parsed) return 0;
  // What the callers do next: print it back (json::dump recurses as deep as the text nests,
  // which the depth bound keeps small) and read it as each kind of file.
  meshscope::fuzz::require(!j.dump().empty());
  located_or_nothing([&] { (void)meshscope::cost::parse_hardware(j, "fuzz.json"); });
  located_or_nothing([&] { (void)meshscope::cost::parse_framework(j, "fuzz.json"); });
  located_or_nothing([&] {
    const meshscope::cost::Calibration c = meshscope::cost::parse_calibration(j, "fuzz.json");
    const std::string text = meshscope::cost::to_json(c);
    const meshscope::cost::Calibration back = meshscope::cost::parse_calibration(
        meshscope::traces::parse_json_text(text, "fuzz.json"), "fuzz.json");
    meshscope::fuzz::require(meshscope::cost::to_json(back) == text);
  });
  return 0;
}
