// libFuzzer target: any bytes as a hand-written JSON file (a config, a hardware file, a framework
// profile, a calibration) through traces::parse_json_text. Only std::runtime_error naming the
// file may come out; anything else (a crash, a sanitizer report, nlohmann's own exception, a
// recursion that overflows the stack) is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_check.h"
#include "traces/json_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json j = meshscope::traces::parse_json_text(text, "fuzz.json");
    // What the readers do next: walk it, and print it back (json::dump recurses as deep as the
    // text nests, which the depth bound keeps small).
    meshscope::fuzz::require(!j.dump().empty());
  } catch (const nlohmann::json::exception&) {
    meshscope::fuzz::require(false);  // every parse failure must be a located runtime_error
  } catch (const std::runtime_error& e) {
    meshscope::fuzz::require(std::string(e.what()).rfind("fuzz.json: ", 0) == 0);
  }
  return 0;
}
