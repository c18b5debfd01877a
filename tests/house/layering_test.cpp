// The layering of docs/ARCHITECTURE.md, checked on the sources: every `#include "folder/..."` of a
// library folder names a folder that the table below lets it use. The build already refuses an
// include of a library a target does not link (cmake/HeaderViews.cmake); this test holds the
// folders to the documented table, which is narrower than what the targets link.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace meshscope {
namespace {

namespace fs = std::filesystem;

// Folder -> the folders its files may include (besides itself). A folder's sub-folder is a
// folder of its own. Keep in step with the library table of docs/ARCHITECTURE.md.
const std::map<std::string, std::set<std::string>> kMayUse = {
    {"traces", {}},
    {"traces/import", {"traces"}},
    {"kernels/cpu", {}},
    {"kernels/cuda", {"kernels/cpu"}},
    {"sim/mesh", {}},  // plus the header-only core headers, see kHeaderOnlyCore
    {"sim/schedule", {"sim/mesh", "traces"}},                          // atomic writer, printable()
    {"sim/model", {"sim/mesh", "kernels/cpu"}},                        // kernels/cpu/activation.h
    {"sim/cost", {"sim/model", "sim/mesh", "traces", "kernels/cpu"}},  // csv_lines.h
    {"sim/engine", {"sim/schedule", "sim/mesh", "traces"}},
    {"sim/predict", {"sim/engine", "sim/cost", "sim/model", "sim/schedule", "sim/mesh", "traces"}},
    {"profiler/runtime", {"kernels/cpu", "sim/mesh"}},
    {"profiler/runtime/mpi", {"profiler/runtime", "sim/mesh"}},
    {"profiler/runtime/cuda", {"profiler/runtime", "kernels/cuda", "kernels/cpu", "sim/mesh"}},
    {"profiler/capture", {"profiler/runtime", "sim/schedule", "sim/mesh", "traces"}},
    {"profiler/capture/cupti",
     {"profiler/capture", "profiler/runtime", "profiler/runtime/cuda", "kernels/cuda",
      "sim/schedule", "sim/mesh", "traces"}},
    {"profiler/exec",
     {"profiler/runtime", "profiler/capture", "kernels/cpu", "sim/mesh", "sim/model",
      "sim/schedule", "traces"}},
    {"gui/view", {"traces", "sim/mesh", "sim/schedule"}},
    {"gui/app",
     {"gui/view", "sim/predict", "sim/cost", "sim/schedule", "sim/mesh", "traces",
      "traces/import"}},
    {"gui", {"gui/app", "gui/view", "traces"}},  // main.cpp of meshscope-gui
    {"cli",
     {"profiler/exec", "profiler/capture", "profiler/runtime", "profiler/runtime/mpi",
      "sim/predict", "sim/engine", "sim/cost", "sim/model", "sim/schedule", "sim/mesh", "traces",
      "traces/import", "kernels/cpu"}},
};

// meshscope::timeline, the core under everything: these headers include only each other.
const std::set<std::string> kCoreHeaders = {"traces/timeline.h",       "traces/mesh_coord.h",
                                            "traces/byte_codec.h",     "traces/timeline_codec.h",
                                            "traces/collective.h",     "traces/enum_names.h",
                                            "traces/timeline_merge.h", "traces/run_descriptor.h"};
// Core headers that need no library (no .cpp): the vocabulary every layer shares (mesh coordinates,
// the collective descriptor, enum names, the run descriptor); any folder may include them. The
// build gives a target their view through the core it links (cmake/HeaderViews.cmake).
const std::set<std::string> kHeaderOnlyCore = {"traces/mesh_coord.h", "traces/collective.h",
                                               "traces/enum_names.h", "traces/run_descriptor.h"};

struct Violation {
  std::string where;  // file:line
  std::string include;
};

bool is_source(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".h" || e == ".cpp" || e == ".cu" || e == ".cuh";
}

std::vector<Violation> violations() {
  const fs::path root = MESHSCOPE_SOURCE_DIR;
  const std::regex include_re(R"(^\s*#\s*include\s+"([^"]+)\")");
  std::vector<Violation> out;
  for (const auto& [folder, uses] : kMayUse) {
    if (!fs::is_directory(root / folder)) continue;
    for (const auto& entry : fs::directory_iterator(root / folder)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      const std::string file = folder + "/" + entry.path().filename().string();
      const bool core = kCoreHeaders.count(file) > 0 || file == "traces/timeline.cpp" ||
                        file == "traces/timeline_codec.cpp" || file == "traces/timeline_merge.cpp";
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string inc = m[1];
        const auto slash = inc.rfind('/');
        if (slash == std::string::npos) continue;  // a file beside it
        const std::string dir = inc.substr(0, slash);
        bool ok;
        if (core)
          ok = kCoreHeaders.count(inc) > 0;
        else if (kHeaderOnlyCore.count(inc) > 0)
          ok = true;
        else
          ok = dir == folder || uses.count(dir) > 0;
        if (!ok) out.push_back({file + ":" + std::to_string(n), inc});
      }
    }
  }
  return out;
}

TEST(Layering, EveryIncludeGoesDownTheDocumentedLayers) {
  const auto v = violations();
  for (const Violation& x : v) ADD_FAILURE() << x.where << " includes " << x.include;
  EXPECT_TRUE(v.empty());
}

TEST(Layering, EveryLibraryFolderIsInTheTable) {
  // A new folder with sources must say what it may use, or the check above would skip it.
  const fs::path root = MESHSCOPE_SOURCE_DIR;
  for (const char* top : {"traces", "kernels", "sim", "profiler", "gui", "cli"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file() || !is_source(e.path())) continue;
      const std::string folder = fs::relative(e.path().parent_path(), root).string();
      if (folder.find("samples") != std::string::npos ||
          folder.find("catalog") != std::string::npos)
        continue;
      EXPECT_TRUE(kMayUse.count(folder)) << folder << " (" << e.path().filename().string() << ")";
    }
  }
}

}  // namespace
}  // namespace meshscope
