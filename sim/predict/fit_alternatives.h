// What would let a configuration that does not fit its device's memory fit: the same
// configuration with its recomputation and ZeRO stage changed (`predict` prints them under a row
// that does not fit, and gives them in --json as "would_fit").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/predict/config.h"
#include "sim/predict/simulate.h"

namespace meshscope::predict {

struct FitAlternative {
  // The options that differ from the configuration's, as a config writes them:
  // `options.recompute "full"`, `options.recompute_every 2`, `options.zero 3`.
  std::vector<std::pair<std::string, std::string>> changes;
  Summary summary;  // fits, or the memory it would still need (no step time then)
};

struct FitAlternatives {
  std::vector<FitAlternative> fitting;  // those that fit, fastest first
  int tried = 0;                        // combinations simulated
  // Whether ZeRO stages were among them (not when dp is 1, or the config is at stage 3 already).
  bool zero_varied = false;
  // When none fits: the one that needs the least memory.
  FitAlternative least_memory;
};

// Each recomputation the config's framework profile offers (full recomputation also of every
// second and every fourth layer, options.recompute_every) combined
// with each ZeRO stage from the config's up to 3 (dp > 1) that the profile runs (zero_stages, and
// pipelined_zero beside pipeline parallelism), every combination but the config's own,
// simulated with the same options (the engine runs only for those that fit). Alternatives the
// simulator refuses are skipped; of those that fit alike in step time and memory, the one with
// the fewest changes is kept.
FitAlternatives fit_alternatives(const PredictConfig& config, SimulateOptions options);

// One line per change: `options.recompute "full", options.zero 3`.
std::string describe(const FitAlternative& a);

// What `predict` prints under a configuration (`base`) that does not fit: up to `top` of those
// that fit with their step time against the base's and their memory, or, when none does, the
// least memory any needs and what else reduces it.
std::string format_fit_alternatives(const FitAlternatives& f, const Summary& base, int top = 5);

// --json's "would_fit": each that fits, fastest first: {"options": {...}, "step_time_s",
// "tokens_per_s", "mfu", "peak_memory_bytes"}.
nlohmann::json to_json(const FitAlternatives& f);

}  // namespace meshscope::predict
