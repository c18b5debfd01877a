// Where a test finds the source tree (committed fixtures, configs) and the build tree (the built
// binaries), as configured by CMake; the environment's MESHSCOPE_SOURCE_DIR, when set, names the
// source tree instead (a bundle of test binaries run from a checkout elsewhere: gpu-check.sh).
#pragma once

namespace meshscope::testing {

const char* source_dir();
const char* binary_dir();

}  // namespace meshscope::testing

// The names the tests use: std::string(MESHSCOPE_SOURCE_DIR) + "/...".
#define MESHSCOPE_SOURCE_DIR (::meshscope::testing::source_dir())
#define MESHSCOPE_BINARY_DIR (::meshscope::testing::binary_dir())
