// libFuzzer target: any bytes as a `meshscope predict --config` file, through what the command does
// with one: traces::parse_json_text, predict::expand_sweep, then predict::simulate of its first
// valid point (no Timeline, as the command's table) and, when it does not fit, the alternatives
// the command then tries (predict::fit_alternatives). Reading and expanding may only fail with a
// std::runtime_error that names the file; simulating, with a std::exception that names a key (the
// command prints it after the file's name), never nlohmann's (a key read unchecked). A crash, a
// sanitizer report, a hang (libFuzzer's -timeout) or growth past -rss_limit_mb is a bug: the
// hostile configurations of issue 12, searched for instead of listed. $MESHSCOPE_MEMORY_LIMIT holds
// what a config may plan to use below the fuzzer's own limit, so that one the command would refuse
// on a machine of that size is refused here. Seeded with the configs the project ships
// (scripts/ci-fuzz.sh).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "sim/predict/config.h"
#include "sim/predict/fit_alternatives.h"
#include "sim/predict/simulate.h"
#include "traces/json_file.h"

using meshscope::fuzz::located_or_nothing;
using meshscope::fuzz::require;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("MESHSCOPE_MEMORY_LIMIT", "256M", 1);  // half of it per simulation, under -rss_limit_mb
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace predict = meshscope::predict;
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  std::vector<predict::SweepPoint> points;
  if (!located_or_nothing([&] {
        j = meshscope::traces::parse_json_text(text, "fuzz.json");
        points = predict::expand_sweep(j, "fuzz.json");
      }))
    return 0;
  require(!points.empty());
  for (const predict::SweepPoint& p : points) {
    if (!p.error.empty()) continue;
    predict::SimulateOptions options;
    options.build_timeline = false;
    try {
      const predict::Summary s = predict::simulate(p.config, options).summary;
      require(std::isfinite(s.step_time_s) && s.step_time_s >= 0);
      // One that does not fit: what `predict` then tries (its recomputation and ZeRO stages).
      // Each alternative offered fits, and they come fastest first.
      if (!s.fits) {
        const predict::FitAlternatives f = predict::fit_alternatives(p.config, options);
        double previous = 0;
        for (const predict::FitAlternative& a : f.fitting) {
          require(a.summary.fits && !a.changes.empty() && a.summary.step_time_s >= previous);
          previous = a.summary.step_time_s;
        }
        (void)predict::format_fit_alternatives(f, s);
        (void)predict::to_json(f).dump();
      }
    } catch (const nlohmann::json::exception&) {
      require(false);
    } catch (const std::exception& e) {
      // What parse_config let through must fail naming a key, as its own checks do: an error
      // without one comes from deeper down (a model builder, the engine) and means a check is
      // missing from the config's reader.
      require(std::string(e.what()).find("key '") != std::string::npos);
    }
    break;  // the first valid point; a sweep's others are the same code with other numbers
  }
  return 0;
}
