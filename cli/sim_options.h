// What `simulate` and `predict` share: the --config and --calibration options and loading them.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/calibration.h"

namespace CLI {
class App;
}

namespace meshscope::cli {

struct SimInputArgs {
  std::string config;       // configuration JSON (keys: docs/CONFIG.md)
  std::string calibration;  // from `meshscope calibrate`; empty: the catalog's figures
};

// Adds --config (required; `config_help` says what lists in it do) and --calibration.
void add_sim_input_options(CLI::App& cmd, SimInputArgs& args, const std::string& config_help);

struct SimInputs {
  nlohmann::json config;
  std::optional<cost::Calibration> calibration;
  const cost::Calibration* calibration_or_null() const {
    return calibration ? &*calibration : nullptr;
  }
};

// Reads both files; throws std::runtime_error naming the file (and byte or key) on bad input.
SimInputs load_sim_inputs(const SimInputArgs& args);

}  // namespace meshscope::cli
