// Finds and dlopens meshscope's optional modules; each is opened at most once per process.
#include "profiler/runtime/plugin.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

namespace meshscope::runtime {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("MESHSCOPE_PLUGIN_DIR"); env != nullptr && *env != '\0')
    dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path());
    dirs.push_back(exe.parent_path().parent_path());
    dirs.push_back(exe.parent_path().parent_path() / "lib" / "meshscope");
  }
  return dirs;
}

struct Loaded {
  void* handle = nullptr;
  std::string why;  // when handle is null
};

Loaded open_module(std::string_view file) {
  Loaded out;
  std::string tried;
  for (const fs::path& dir : search_dirs()) {
    const fs::path path = dir / std::string(file);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      tried += (tried.empty() ? "" : ", ") + dir.string();
      continue;
    }
    // RTLD_LOCAL: the module's copies of meshscope's libraries stay its own.
    out.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out.handle == nullptr) {
      const char* e = dlerror();
      out.why = "cannot load " + path.string() + ": " + (e != nullptr ? e : "unknown error");
    }
    return out;
  }
  out.why = std::string(file) + " not found (looked in " + tried + ")";
  return out;
}

}  // namespace

void* plugin_symbol(std::string_view file, const char* symbol, std::string* why) {
  static std::mutex mu;
  static std::map<std::string, Loaded, std::less<>> modules;
  std::lock_guard<std::mutex> lock(mu);
  auto it = modules.find(file);
  if (it == modules.end()) it = modules.emplace(std::string(file), open_module(file)).first;
  const Loaded& m = it->second;
  if (m.handle == nullptr) {
    if (why != nullptr) *why = m.why;
    return nullptr;
  }
  void* sym = dlsym(m.handle, symbol);
  if (sym == nullptr && why != nullptr) *why = std::string(file) + " has no " + symbol;
  return sym;
}

}  // namespace meshscope::runtime
