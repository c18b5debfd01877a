// The one-line error parse_config gives a config, for the tests of its keys.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/predict/config.h"

namespace meshscope::predict::testing {

// What parse_config throws for `j` read from "cfg.json", "" when it accepts it.
inline std::string error_of(const nlohmann::json& j) {
  try {
    parse_config(j, "cfg.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace meshscope::predict::testing
