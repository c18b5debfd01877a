// Reading configuration files: JSON with every error located (file, byte, key), and where a
// relative --config path is looked for.
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "sim/predict/config.h"
#include "traces/json_file.h"

#ifndef MESHSCOPE_SOURCE_ROOT
#define MESHSCOPE_SOURCE_ROOT ""
#endif

namespace meshscope::predict {

using nlohmann::json;

json load_json_file(const std::string& path) {
  return traces::load_json_file(path, "config file", kMaxConfigDepth);
}

std::string resolve_config_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, ec)) return path;
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("MESHSCOPE_CONFIGS")) {
    std::stringstream ss(env);
    std::string d;
    while (std::getline(ss, d, ':'))
      if (!d.empty()) roots.emplace_back(d);
  }
  const fs::path source = MESHSCOPE_SOURCE_ROOT;
  if (!source.empty()) {
    roots.push_back(source);  // "sim/predict/configs/x.json" as the README writes it
    roots.push_back(source / "sim" / "predict" / "configs");  // "x.json", "cpu/A-....json"
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    roots.push_back(exe.parent_path() / "configs");
    roots.push_back(exe.parent_path().parent_path() / "share" / "meshscope" /
                    "configs");  // installed
  }
  for (const fs::path& r : roots)
    if (fs::is_regular_file(r / path, ec)) return (r / path).string();
  return path;
}

}  // namespace meshscope::predict
