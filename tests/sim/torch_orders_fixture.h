// The schedules torch 2.15 wrote (tests/fixtures/torch_orders) and a whole-file reader, shared by
// the torch CSV and torch order tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace meshscope::schedule::testing {

inline const std::filesystem::path kTorchOrdersDir =
    std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch_orders";

inline std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace meshscope::schedule::testing
