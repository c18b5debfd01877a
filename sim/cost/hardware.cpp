// Reading hardware catalog entries from JSON files.
#include "sim/cost/hardware.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "traces/enum_names.h"
#include "traces/json_file.h"

namespace meshscope::cost {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& why) {
  throw std::runtime_error(where + ": key '" + key + "': " + why);
}

// The keys a hardware file may hold, per object (hardware_keys() lists them dotted).
const std::vector<std::string_view> kTopKeys = {"name",
                                                "description",
                                                "kind",
                                                "sources",
                                                "peak_flops",
                                                "memory_bytes",
                                                "memory_bandwidth_bytes_per_s",
                                                "compute_units",
                                                "launch_overhead_ns",
                                                "collective_ctas",
                                                "efficiency",
                                                "host_cores",
                                                "devices_per_node",
                                                "nics_per_node",
                                                "intra_node",
                                                "inter_node"};
const std::vector<std::string_view> kEfficiencyKeys = {
    "gemm_max",         "tile_m",           "tile_n",        "k_half",    "attention",
    "attention_flash2", "attention_flash3", "attention_seq", "conv",      "memory",
    "sustained",        "sustained_spread", "gemm_fp8_max",  "fp8_k_half"};
const std::vector<std::string_view> kTierKeys = {"name",
                                                 "kind",
                                                 "bandwidth_bytes_per_s",
                                                 "latency_ns",
                                                 "collective_efficiency",
                                                 "nvls_bus_bandwidth_bytes_per_s"};

// The helpers below read `key` of `j`, an object whose dotted name is `prefix` ("efficiency."), so
// that every error names the key as the file nests it: 'efficiency.tile_m'.
const json& require(const json& j, const std::string& key, const std::string& where,
                    const std::string& prefix = "") {
  if (!j.is_object() || !j.contains(key)) fail(where, prefix + key, "missing");
  return j.at(key);
}

double number(const json& j, const std::string& key, const std::string& where, double lo = 0,
              const std::string& prefix = "") {
  const json& v = require(j, key, where, prefix);
  if (!v.is_number()) fail(where, prefix + key, "must be a number");
  const double x = v.get<double>();
  if (!(x >= lo)) {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", lo);
    fail(where, prefix + key, "must be >= " + std::string(bound));
  }
  return x;
}

// number(), also refused above `hi`.
double number_at_most(const json& j, const std::string& key, const std::string& where, double lo,
                      double hi, const std::string& prefix = "") {
  const double x = number(j, key, where, lo, prefix);
  if (x > hi) {
    char bound[32];
    std::snprintf(bound, sizeof bound, "%g", hi);
    fail(where, prefix + key,
         "must be at most " + std::string(bound) +
             " (far past any device: a typo? The bounds: sim/cost/hardware.h)");
  }
  return x;
}

double number_or(const json& j, const std::string& key, const std::string& where, double def,
                 const std::string& prefix = "") {
  if (!j.contains(key)) return def;
  return number(j, key, where, 0, prefix);
}

// A count (SMs, cores, devices, tile sides): a whole number in [lo, hi], so that it converts to
// an int without overflow.
int64_t count_or(const json& j, const std::string& key, const std::string& where, int64_t lo,
                 int64_t hi, std::optional<int64_t> def, const std::string& prefix = "") {
  if (!j.contains(key)) {
    if (!def) fail(where, prefix + key, "missing");
    return *def;
  }
  const json& v = j.at(key);
  const double x = v.is_number() ? v.get<double>() : -1;
  if (!v.is_number() || x != std::floor(x) || x < static_cast<double>(lo) ||
      x > static_cast<double>(hi))
    fail(where, prefix + key,
         "must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int64_t>(x);
}

std::string string_or(const json& j, const std::string& key, const std::string& where,
                      const std::string& def, const std::string& prefix = "") {
  if (!j.contains(key)) return def;
  if (!j.at(key).is_string()) fail(where, prefix + key, "must be a string");
  return j.at(key).get<std::string>();
}

// Counts larger than any device or node has; the bound keeps them within an int.
constexpr int64_t kMaxCount = 1 << 24;

LinkTier parse_tier(const json& j, const std::string& key, const std::string& where) {
  const json& t = require(j, key, where);
  const std::string p = key + ".";
  traces::require_known_keys(t, kTierKeys, where, p);
  LinkTier tier;
  tier.name = string_or(t, "name", where, key, p);
  const std::string kind = string_or(t, "kind", where, "nvlink", p);
  auto it = std::find(kLinkKindNames.begin(), kLinkKindNames.end(), kind);
  if (it == kLinkKindNames.end())
    fail(where, p + "kind", "must be nvlink, pci or net, not '" + kind + "'");
  tier.kind = static_cast<LinkKind>(it - kLinkKindNames.begin());
  tier.bandwidth_bytes_per_s =
      number_at_most(t, "bandwidth_bytes_per_s", where, 1, kMaxBytesPerS, p);
  tier.latency_ns = number_at_most(t, "latency_ns", where, 0, kMaxDelayNs, p);
  tier.collective_efficiency = number_or(t, "collective_efficiency", where, 1.0, p);
  if (tier.collective_efficiency <= 0 || tier.collective_efficiency > 1)
    fail(where, p + "collective_efficiency", "must be in (0, 1]");
  if (t.contains("nvls_bus_bandwidth_bytes_per_s"))
    tier.nvls_bus_bandwidth_bytes_per_s =
        number_at_most(t, "nvls_bus_bandwidth_bytes_per_s", where, 0, kMaxBytesPerS, p);
  if (tier.nvls_bus_bandwidth_bytes_per_s > 0 && tier.kind != LinkKind::kNvlink)
    fail(where, p + "nvls_bus_bandwidth_bytes_per_s",
         "is an NVSwitch's (kind nvlink), not a " + kind + " tier's");
  return tier;
}

void parse_efficiency(const json& e, const std::string& where, Efficiency& ef) {
  const std::string p = "efficiency.";
  traces::require_known_keys(e, kEfficiencyKeys, where, p);
  ef.gemm_max = number_or(e, "gemm_max", where, ef.gemm_max, p);
  ef.tile_m = count_or(e, "tile_m", where, 1, 1 << 16, ef.tile_m, p);
  ef.tile_n = count_or(e, "tile_n", where, 1, 1 << 16, ef.tile_n, p);
  ef.k_half = number_or(e, "k_half", where, ef.k_half, p);
  ef.gemm_fp8_max = number_or(e, "gemm_fp8_max", where, 0, p);
  ef.fp8_k_half = number_or(e, "fp8_k_half", where, 0, p);
  if (ef.gemm_fp8_max > 1) fail(where, p + "gemm_fp8_max", "must be in [0, 1] (0: no FP8 rate)");
  ef.attention = number_or(e, "attention", where, ef.attention, p);
  ef.attention_flash2 = number_or(e, "attention_flash2", where, 0, p);
  ef.attention_flash3 = number_or(e, "attention_flash3", where, 0, p);
  ef.attention_seq = count_or(e, "attention_seq", where, 1, 1 << 24, 0, p);
  ef.conv = number_or(e, "conv", where, ef.conv, p);
  ef.memory = number_or(e, "memory", where, ef.memory, p);
  ef.sustained = number_or(e, "sustained", where, ef.sustained, p);
  ef.sustained_spread = number_or(e, "sustained_spread", where, 0, p);
  // A spread of 10% would make the slowest of 16k GPUs 40% slow: no measured one is near it.
  if (ef.sustained_spread < 0 || ef.sustained_spread > 0.1)
    fail(where, p + "sustained_spread", "must be in [0, 0.1]");
  using Share = std::pair<const char*, double>;
  for (const auto& [k, f] : {Share{"attention_flash2", ef.attention_flash2},
                             Share{"attention_flash3", ef.attention_flash3}})
    if (f > 1) fail(where, p + k, "must be in [0, 1] (0 or absent: not available)");
  for (const auto& [k, f] :
       {Share{"gemm_max", ef.gemm_max}, Share{"attention", ef.attention}, Share{"conv", ef.conv},
        Share{"memory", ef.memory}, Share{"sustained", ef.sustained}})
    if (f <= 0 || f > 1) fail(where, p + k, "must be in (0, 1]");
}

}  // namespace

double expected_largest_normal(int64_t n) {
  if (n <= 1) return 0;
  // Blom: the largest of n draws sits near the quantile (n - 3/8) / (n + 1/4); Phi^-1 of it by
  // bisection on Phi(x) = erfc(-x / sqrt 2) / 2, which rises with x.
  const double q = (static_cast<double>(n) - 0.375) / (static_cast<double>(n) + 0.25);
  double lo = 0, hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double slowest_gpu_share(const Efficiency& e, int64_t gpus) {
  return 1 - e.sustained_spread * expected_largest_normal(gpus);
}

std::optional<Precision> parse_precision(std::string_view s) {
  return traces::parse_enum<Precision>(kPrecisionNames, s);
}

Hardware parse_hardware(const json& j, const std::string& where) {
  traces::require_known_keys(j, kTopKeys, where, "");
  Hardware hw;
  const json& name = require(j, "name", where);
  if (!name.is_string() || name.get<std::string>().empty())
    fail(where, "name", "must be a non-empty string");
  hw.name = name.get<std::string>();
  hw.description = string_or(j, "description", where, "");
  hw.kind = string_or(j, "kind", where, "gpu");
  if (hw.kind != "gpu" && hw.kind != "cpu") fail(where, "kind", "must be gpu or cpu");
  if (j.contains("sources")) {
    const json& src = j.at("sources");
    if (!src.is_array()) fail(where, "sources", "must be a list of strings");
    for (const json& s : src) {
      if (!s.is_string()) fail(where, "sources", "must be a list of strings");
      hw.sources.push_back(s.get<std::string>());
    }
  }
  if (hw.sources.empty())
    fail(where, "sources", "every entry must cite where its figures come from");
  const json& peaks = require(j, "peak_flops", where);
  std::vector<std::string_view> peak_keys(kPrecisionNames.begin(), kPrecisionNames.end());
  peak_keys.push_back("fp8");
  traces::require_known_keys(peaks, peak_keys, where, "peak_flops.");
  bool any = false;
  for (size_t i = 0; i < kPrecisionNames.size(); ++i) {
    const std::string p(kPrecisionNames[i]);
    if (peaks.contains(p)) {
      hw.peak_flops[i] = number_at_most(peaks, p, where, 1, kMaxFlops, "peak_flops.");
      any = true;
    }
  }
  if (!any) fail(where, "peak_flops", "needs at least one of bf16, fp16, fp32, tf32");
  if (peaks.contains("fp8"))
    hw.peak_fp8 = number_at_most(peaks, "fp8", where, 1, kMaxFlops, "peak_flops.");
  hw.memory_bytes = number_at_most(j, "memory_bytes", where, 1, kMaxBytes);
  hw.memory_bandwidth_bytes_per_s =
      number_at_most(j, "memory_bandwidth_bytes_per_s", where, 1, kMaxBytesPerS);
  hw.compute_units = static_cast<int>(count_or(j, "compute_units", where, 1, kMaxCount, {}));
  if (j.contains("launch_overhead_ns"))
    hw.launch_overhead_ns = number_at_most(j, "launch_overhead_ns", where, 0, kMaxDelayNs);
  hw.collective_ctas = static_cast<int>(count_or(j, "collective_ctas", where, 0, kMaxCount, 0));
  if (hw.collective_ctas >= hw.compute_units)
    fail(where, "collective_ctas", "must be at least 0 and below compute_units");
  if (j.contains("efficiency")) parse_efficiency(j.at("efficiency"), where, hw.efficiency);
  if (hw.peak_fp8 > 0 && hw.efficiency.gemm_fp8_max <= 0)
    fail(where, "efficiency.gemm_fp8_max", "is needed with peak_flops.fp8 (its GEMMs' best share)");
  hw.host_cores = static_cast<int>(count_or(j, "host_cores", where, 0, kMaxCount, 0));
  hw.devices_per_node = static_cast<int>(count_or(j, "devices_per_node", where, 1, kMaxCount, {}));
  hw.nics_per_node =
      static_cast<int>(count_or(j, "nics_per_node", where, 1, kMaxCount, hw.devices_per_node));
  hw.intra_node = parse_tier(j, "intra_node", where);
  hw.inter_node = parse_tier(j, "inter_node", where);
  return hw;
}

std::vector<std::string> hardware_keys() {
  std::vector<std::string> keys;
  for (std::string_view k : kTopKeys)
    if (k != "peak_flops" && k != "efficiency" && k != "intra_node" && k != "inter_node")
      keys.emplace_back(k);
  for (std::string_view p : kPrecisionNames) keys.push_back("peak_flops." + std::string(p));
  keys.push_back("peak_flops.fp8");
  for (std::string_view k : kEfficiencyKeys) keys.push_back("efficiency." + std::string(k));
  for (const char* tier : {"intra_node.", "inter_node."})
    for (std::string_view k : kTierKeys) keys.push_back(tier + std::string(k));
  return keys;
}

Hardware load_hardware_file(const std::string& path) {
  const json j = traces::load_json_file(path, "hardware file");
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
  const std::string path =
      find_json_in(name_or_path, dirs, "hardware",
                   "set MESHSCOPE_CATALOG to a directory of hardware .json files, e.g. "
                   "the source tree's sim/cost/catalog, or give a path ending in .json");
  Hardware hw = load_hardware_file(path);
  require_catalog_name(hw.name, name_or_path, path);
  return hw;
}

void require_catalog_name(const std::string& name, const std::string& asked,
                          const std::string& path) {
  // Found by its file name, it must be what it says it is: a prediction reports the file's
  // name and takes that name's published runs for its range.
  if (name != asked)
    throw std::runtime_error(path + ": key 'name': \"" + name +
                             "\", but the catalog finds the file as '" + asked +
                             "' (its file name): make the two the same");
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
