// Reading hardware catalog entries from JSON files.
#include "sim/cost/hardware.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "traces/enum_names.h"

namespace meshscope::cost {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& why) {
  throw std::runtime_error(where + ": key '" + key + "': " + why);
}

const json& require(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) fail(where, key, "missing");
  return j.at(key);
}

double number(const json& j, const std::string& key, const std::string& where, double lo = 0) {
  const json& v = require(j, key, where);
  if (!v.is_number()) fail(where, key, "must be a number");
  const double x = v.get<double>();
  if (!(x >= lo)) fail(where, key, "must be >= " + std::to_string(lo));
  return x;
}

double number_or(const json& j, const std::string& key, const std::string& where, double def) {
  if (!j.contains(key)) return def;
  return number(j, key, where);
}

LinkTier parse_tier(const json& j, const std::string& key, const std::string& where) {
  const json& t = require(j, key, where);
  const std::string w = where + ": " + key;
  LinkTier tier;
  tier.name = t.value("name", key);
  const std::string kind = t.value("kind", "nvlink");
  auto it = std::find(kLinkKindNames.begin(), kLinkKindNames.end(), kind);
  if (it == kLinkKindNames.end()) fail(w, "kind", "must be nvlink, pci or net, not '" + kind + "'");
  tier.kind = static_cast<LinkKind>(it - kLinkKindNames.begin());
  tier.bandwidth_bytes_per_s = number(t, "bandwidth_bytes_per_s", w, 1);
  tier.latency_ns = number(t, "latency_ns", w);
  tier.collective_efficiency = number_or(t, "collective_efficiency", w, 1.0);
  if (tier.collective_efficiency <= 0 || tier.collective_efficiency > 1)
    fail(w, "collective_efficiency", "must be in (0, 1]");
  return tier;
}

}  // namespace

std::optional<Precision> parse_precision(std::string_view s) {
  return traces::parse_enum<Precision>(kPrecisionNames, s);
}

Hardware parse_hardware(const json& j, const std::string& where) {
  Hardware hw;
  const json& name = require(j, "name", where);
  if (!name.is_string()) fail(where, "name", "must be a string");
  hw.name = name.get<std::string>();
  hw.description = j.value("description", "");
  hw.kind = j.value("kind", "gpu");
  if (hw.kind != "gpu" && hw.kind != "cpu") fail(where, "kind", "must be gpu or cpu");
  if (j.contains("sources")) hw.sources = j.at("sources").get<std::vector<std::string>>();
  if (hw.sources.empty())
    fail(where, "sources", "every entry must cite where its figures come from");
  const json& peaks = require(j, "peak_flops", where);
  bool any = false;
  for (size_t i = 0; i < kPrecisionNames.size(); ++i) {
    const std::string p(kPrecisionNames[i]);
    if (peaks.contains(p)) {
      hw.peak_flops[i] = number(peaks, p, where + ": peak_flops", 1);
      any = true;
    }
  }
  if (!any) fail(where, "peak_flops", "needs at least one of bf16, fp16, fp32, tf32");
  hw.memory_bytes = number(j, "memory_bytes", where, 1);
  hw.memory_bandwidth_bytes_per_s = number(j, "memory_bandwidth_bytes_per_s", where, 1);
  hw.compute_units = static_cast<int>(number(j, "compute_units", where, 1));
  hw.launch_overhead_ns = number_or(j, "launch_overhead_ns", where, 0);
  hw.collective_ctas = static_cast<int>(number_or(j, "collective_ctas", where, 0));
  if (hw.collective_ctas < 0 || hw.collective_ctas >= hw.compute_units)
    fail(where, "collective_ctas", "must be at least 0 and below compute_units");
  if (j.contains("efficiency")) {
    const json& e = j.at("efficiency");
    const std::string w = where + ": efficiency";
    Efficiency& ef = hw.efficiency;
    ef.gemm_max = number_or(e, "gemm_max", w, ef.gemm_max);
    ef.tile_m = static_cast<int64_t>(number_or(e, "tile_m", w, static_cast<double>(ef.tile_m)));
    ef.tile_n = static_cast<int64_t>(number_or(e, "tile_n", w, static_cast<double>(ef.tile_n)));
    ef.k_half = number_or(e, "k_half", w, ef.k_half);
    ef.attention = number_or(e, "attention", w, ef.attention);
    ef.attention_flash2 = number_or(e, "attention_flash2", w, 0);
    ef.attention_flash3 = number_or(e, "attention_flash3", w, 0);
    for (double f : {ef.attention_flash2, ef.attention_flash3})
      if (f > 1) fail(w, "attention_flash*", "efficiencies must be in (0, 1]");
    ef.conv = number_or(e, "conv", w, ef.conv);
    ef.memory = number_or(e, "memory", w, ef.memory);
    ef.sustained = number_or(e, "sustained", w, ef.sustained);
    for (double f : {ef.gemm_max, ef.attention, ef.conv, ef.memory, ef.sustained})
      if (f <= 0 || f > 1) fail(w, "*", "efficiencies must be in (0, 1]");
    if (ef.tile_m < 1 || ef.tile_n < 1) fail(w, "tile_m", "tiles must be >= 1");
  }
  hw.host_cores = static_cast<int>(number_or(j, "host_cores", where, 0));
  hw.devices_per_node = static_cast<int>(number(j, "devices_per_node", where, 1));
  hw.nics_per_node = static_cast<int>(number_or(j, "nics_per_node", where, hw.devices_per_node));
  hw.intra_node = parse_tier(j, "intra_node", where);
  hw.inter_node = parse_tier(j, "inter_node", where);
  return hw;
}

Hardware load_hardware_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open hardware file");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": malformed JSON at byte " + std::to_string(e.byte));
  }
  try {
    return parse_hardware(j, path);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::vector<std::string> catalog_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("MESHSCOPE_CATALOG")) {
    std::stringstream ss(env);
    std::string d;
    while (std::getline(ss, d, ':'))
      if (!d.empty()) dirs.push_back(d);
  }
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path bin = exe.parent_path();
    dirs.push_back((bin.parent_path() / "share" / "meshscope" / "catalog").string());  // installed
    dirs.push_back((bin.parent_path() / "catalog").string());  // a test program in build/tests/
    dirs.push_back((bin / "catalog").string());                // the build tree's copy
  }
  return dirs;
}

Hardware find_hardware(const std::string& name_or_path) {
  return find_hardware_in(name_or_path, catalog_dirs());
}

std::string find_json_in(const std::string& name, const std::vector<std::string>& dirs,
                         const std::string& what, const std::string& hint) {
  namespace fs = std::filesystem;
  std::string searched;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    const fs::path p = fs::path(dir) / (name + ".json");
    if (fs::exists(p, ec)) return p.string();
    searched +=
        (searched.empty() ? "" : ", ") + dir + (fs::is_directory(dir, ec) ? "" : " (missing)");
  }
  std::string known;
  for (const std::string& n : list_json_in(dirs)) known += (known.empty() ? "" : ", ") + n;
  if (searched.empty()) searched = "no directory";
  throw std::runtime_error(
      "unknown " + what + " '" + name + "': no " + name + ".json in " + searched + "; " +
      (known.empty() ? "no catalog found at all" : "the catalog has " + known) + " (" + hint + ")");
}

Hardware find_hardware_in(const std::string& name_or_path, const std::vector<std::string>& dirs) {
  if (name_or_path.ends_with(".json")) return load_hardware_file(name_or_path);
  return load_hardware_file(
      find_json_in(name_or_path, dirs, "hardware",
                   "set MESHSCOPE_CATALOG to a directory of hardware .json files, e.g. "
                   "the source tree's sim/cost/catalog, or give a path ending in .json"));
}

std::vector<std::string> list_hardware() { return list_hardware_in(catalog_dirs()); }

std::vector<std::string> list_hardware_in(const std::vector<std::string>& dirs) {
  return list_json_in(dirs);
}

std::vector<std::string> list_json_in(const std::vector<std::string>& dirs) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json") names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace meshscope::cost
