// Driver entry points are looked up in one place, at the ABI version of the prototype they are
// called through (profiler/runtime/cuda/driver_api.h): asked for by the toolkit's own version,
// cudaGetDriverEntryPointByVersion returns the newest ABI at or below it, which for
// cuStreamGetCtx in CUDA 13 is cuStreamGetCtx_v2, a different signature. This test keeps every
// other file off the raw lookup, so each entry point goes through MESHSCOPE_DRIVER_ENTRY's
// compile-time check of its version.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace meshscope {
namespace {

namespace fs = std::filesystem;

TEST(DriverEntry, OnlyTheCheckedHelperLooksUpDriverEntryPoints) {
  const fs::path root = MESHSCOPE_SOURCE_DIR;
  const std::regex raw(R"(\b(cudaGetDriverEntryPoint(ByVersion)?|cuGetProcAddress(_v2)?)\s*\()");
  const std::string allowed = "profiler/runtime/cuda/driver_api.cpp";
  std::vector<std::string> found;
  size_t scanned = 0;
  for (const char* folder : {"profiler", "kernels", "cli", "sim", "traces", "gui", "bench"}) {
    if (!fs::is_directory(root / folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
      const std::string rel = fs::relative(entry.path(), root).string();
      ++scanned;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const auto comment = line.find("//");
        const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
        if (std::regex_search(code, raw) && rel != allowed) {
          found.push_back(rel + ":" + std::to_string(n) + ": " + line);
        }
      }
    }
  }
  EXPECT_GT(scanned, 100u);  // the tree was found
  EXPECT_TRUE(found.empty()) << "look driver entry points up with MESHSCOPE_DRIVER_ENTRY "
                                "(profiler/runtime/cuda/driver_api.h):\n"
                             << [&] {
                                  std::string all;
                                  for (const auto& f : found) all += f + "\n";
                                  return all;
                                }();
}

}  // namespace
}  // namespace meshscope
