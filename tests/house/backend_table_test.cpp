// The backends of profiler/runtime are the rows of backend_table.h, checked on the sources: every
// row's maker is defined once, and every Backend class is made by some row's maker. A backend
// written without its row (which `--backend` would never reach) fails here; so does a row whose
// backend lives in no source (a GPU module row would otherwise only fail to link in a CUDA build).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace meshscope {
namespace {

namespace fs = std::filesystem;

const fs::path kRuntime = fs::path(MESHSCOPE_SOURCE_DIR) / "profiler" / "runtime";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Row {
  std::string kind, name, maker;
};

std::vector<Row> table_rows() {
  const std::string text = read(kRuntime / "backend_table.h");
  const std::regex row_re(R"re(ROW\(\s*(k\w+)\s*,\s*"([^"]+)"\s*,\s*(\w+)\s*,)re");
  std::vector<Row> rows;
  for (std::sregex_iterator it(text.begin(), text.end(), row_re), end; it != end; ++it)
    rows.push_back({(*it)[1], (*it)[2], (*it)[3]});
  return rows;
}

// Every .h and .cpp under profiler/runtime (the GPU module's and MPI's folders included), by
// path relative to it.
std::map<std::string, std::string> runtime_sources() {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kRuntime)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".h" || ext == ".cpp"))
      files[fs::relative(e.path(), kRuntime).string()] = read(e.path());
  }
  return files;
}

// Classes deriving from Backend, directly or through another such class; minus the ones other
// classes derive from (interfaces such as GpuBackend): class -> its file.
std::map<std::string, std::string> concrete_backends(
    const std::map<std::string, std::string>& files) {
  const std::regex class_re(R"(class\s+(\w+)\s+(?:final\s+)?:\s*public\s+(\w+))");
  std::map<std::string, std::pair<std::string, std::string>> bases;  // class -> (base, file)
  for (const auto& [file, text] : files)
    for (std::sregex_iterator it(text.begin(), text.end(), class_re), end; it != end; ++it)
      bases[(*it)[1]] = {(*it)[2], file};
  std::set<std::string> backends = {"Backend"};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [cls, base] : bases)
      if (backends.count(base.first) && backends.insert(cls).second) grew = true;
  }
  std::map<std::string, std::string> out;
  for (const std::string& cls : backends) {
    if (cls == "Backend") continue;
    bool is_base = false;
    for (const auto& [other, base] : bases) is_base = is_base || base.first == cls;
    if (!is_base) out[cls] = bases.at(cls).second;
  }
  return out;
}

// The body of each definition of `maker` in the sources: file -> text up to its closing brace.
std::map<std::string, std::string> maker_definitions(
    const std::map<std::string, std::string>& files, const std::string& maker) {
  const std::regex def_re("std::unique_ptr<Backend>\\s+" + maker +
                          R"(\s*\(\s*const\s+BackendOptions&\s*\w*\s*\)\s*\{)");
  std::map<std::string, std::string> out;
  for (const auto& [file, text] : files) {
    std::smatch m;
    if (!std::regex_search(text, m, def_re)) continue;
    const size_t begin = static_cast<size_t>(m.position(0));
    const size_t end = text.find("\n}\n", begin);
    out[file] = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  return out;
}

TEST(BackendTable, RowsHaveDistinctKindsNamesAndMakers) {
  const std::vector<Row> rows = table_rows();
  EXPECT_GE(rows.size(), 3u) << "backend_table.h: " << rows.size()
                             << " rows read, cpu, cuda and cuda-virtual at least expected";
  std::set<std::string> kinds, names, makers;
  for (const Row& r : rows) {
    EXPECT_TRUE(kinds.insert(r.kind).second) << r.kind << " has two rows";
    EXPECT_TRUE(names.insert(r.name).second) << "backend '" << r.name << "' has two rows";
    EXPECT_TRUE(makers.insert(r.maker).second) << r.maker << " makes two rows";
  }
}

TEST(BackendTable, EveryRowsMakerIsDefinedOnce) {
  const auto files = runtime_sources();
  for (const Row& r : table_rows()) {
    const auto defs = maker_definitions(files, r.maker);
    EXPECT_EQ(defs.size(), 1u) << "row '" << r.name << "': its maker " << r.maker << " is defined "
                               << defs.size() << " times in profiler/runtime";
  }
}

TEST(BackendTable, EveryBackendClassIsMadeByARow) {
  const auto files = runtime_sources();
  const auto backends = concrete_backends(files);
  // The backends the repository has today: the check must see them to mean anything.
  for (const char* known :
       {"CpuBackend", "ProcessCpuBackend", "CudaNcclBackend", "CudaVirtualBackend"})
    EXPECT_TRUE(backends.count(known)) << known << " not found as a Backend class";
  std::string bodies;
  for (const Row& r : table_rows())
    for (const auto& [file, body] : maker_definitions(files, r.maker)) bodies += body + "\n";
  for (const auto& [cls, file] : backends) {
    EXPECT_TRUE(std::regex_search(bodies, std::regex("\\b" + cls + "\\b")))
        << "profiler/runtime/" << file << ": class " << cls
        << " is a Backend that no maker of backend_table.h builds; add its row (docs/"
           "ARCHITECTURE.md, \"Adding a backend\")";
  }
}

}  // namespace
}  // namespace meshscope
