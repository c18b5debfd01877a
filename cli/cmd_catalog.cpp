// `meshscope catalog`: what a config can name, the hardware entries (`cluster.gpu`) and the
// framework profiles (`framework`), one line each with the published runs behind each; `meshscope
// catalog NAME`: one of them, every figure beside what its sources say of it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/number_text.h"
#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/cost/sources.h"
#include "traces/json_file.h"
#include "traces/printable.h"

namespace meshscope::cli {
namespace {

using nlohmann::json;

struct CatalogArgs {
  std::string name;
  bool json_out = false;
};

// The development runs behind each hardware entry: the rows of every profile's residuals on it
// (the ranges `predict` prints come from them; docs/ACCURACY.md section 2).
std::map<std::string, std::map<std::string, int>> development_runs() {
  std::map<std::string, std::map<std::string, int>> by_hardware;  // hardware -> profile -> rows
  for (const std::string& name : cost::list_frameworks())
    for (const auto& [hardware, r] : cost::find_framework(name).residuals)
      if (r.rows > 0) by_hardware[hardware][name] = r.rows;
  return by_hardware;
}

int total(const std::map<std::string, int>& rows) {
  int n = 0;
  for (const auto& [profile, count] : rows) n += count;
  return n;
}

// "NVIDIA A100 SXM4 80GB in an 8-GPU HGX/DGX A100 node: NVLink 3 ..." -> the part before ':'.
std::string headline(const std::string& description) {
  return description.substr(0, description.find(": "));
}

// In GB (1e9 bytes) for every entry, so that the column compares; an entry whose vendor labels it
// in whole GiB (the A100 and H100 "80GB" are 80 GiB) says so too: "85.9 GB (80 GiB)", "141 GB".
std::string memory(double bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const double gib = bytes / kGiB;
  const std::string gb = format_number("%.4g GB", bytes / 1e9);
  return gib == static_cast<double>(static_cast<int64_t>(gib))
             ? gb + format_number(" (%.0f GiB)", gib)
             : gb;
}

// The first precision the entry gives a peak for, bf16 before the others.
std::pair<double, std::string> headline_peak(const cost::Hardware& hw) {
  for (cost::Precision p : {cost::Precision::kBf16, cost::Precision::kFp16, cost::Precision::kTf32,
                            cost::Precision::kFp32})
    if (hw.peak(p) > 0) return {hw.peak(p), std::string(cost::name(p))};
  return {0, ""};
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w;
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i)
      line += r[i] + (i + 1 < r.size() ? std::string(w[i] - r[i].size() + 2, ' ') : "");
    std::printf("%s\n", line.c_str());
  }
}

void list(bool json_out) {
  const auto runs = development_runs();
  json out = {{"hardware", json::array()}, {"frameworks", json::array()}};
  std::vector<std::vector<std::string>> hw_rows = {{"name", "peak", "GEMM ceiling", "sustained",
                                                    "memory", "HBM", "NVLink a way",
                                                    "network a GPU", "published runs behind it"}};
  for (const std::string& name : cost::list_hardware()) {
    const cost::Hardware hw = cost::find_hardware(name);
    const auto [peak, precision] = headline_peak(hw);
    const auto it = runs.find(name);
    const int n = it == runs.end() ? 0 : total(it->second);
    out["hardware"].push_back({{"name", name},
                               {"description", hw.description},
                               {"kind", hw.kind},
                               {"peak_flops", peak},
                               {"peak_precision", precision},
                               {"gemm_ceiling_flops", peak * hw.efficiency.gemm_max},
                               {"sustained", hw.efficiency.sustained},
                               {"memory_bytes", hw.memory_bytes},
                               {"memory_bandwidth_bytes_per_s", hw.memory_bandwidth_bytes_per_s},
                               {"intra_node_bytes_per_s", hw.intra_node.bandwidth_bytes_per_s},
                               {"inter_node_bytes_per_s", hw.inter_node.bandwidth_bytes_per_s},
                               {"development_runs", n}});
    hw_rows.push_back({name, format_number("%.4g TFLOP/s ", peak / 1e12) + precision,
                       format_number("%.4g TFLOP/s", peak * hw.efficiency.gemm_max / 1e12),
                       format_number("%.3f", hw.efficiency.sustained), memory(hw.memory_bytes),
                       format_number("%.3g TB/s", hw.memory_bandwidth_bytes_per_s / 1e12),
                       format_number("%.4g GB/s", hw.intra_node.bandwidth_bytes_per_s / 1e9),
                       format_number("%.4g GB/s", hw.inter_node.bandwidth_bytes_per_s / 1e9),
                       n > 0 ? std::to_string(n) + " development"
                       : hw.kind == "cpu"
                           ? "none (the CPU backend: calibrate it, docs/ACCURACY.md section 3)"
                           : "none: a what-if entry"});
  }
  std::vector<std::vector<std::string>> fw_rows = {{"name", "published runs behind it", "what"}};
  for (const std::string& name : cost::list_frameworks()) {
    const cost::Framework fw = cost::find_framework(name);
    std::string behind;
    json by_hw = json::object();
    for (const auto& [hardware, r] : fw.residuals) {
      if (r.rows <= 0) continue;
      behind += (behind.empty() ? "" : ", ") + std::to_string(r.rows) + " on " + hardware;
      by_hw[hardware] = r.rows;
    }
    out["frameworks"].push_back(
        {{"name", name}, {"description", fw.description}, {"development_runs", by_hw}});
    fw_rows.push_back({name, behind.empty() ? "none" : behind, headline(fw.description)});
  }
  if (json_out) {
    std::cout << json_text(out) << "\n";
    return;
  }
  std::printf(
      "hardware entries (a config's cluster.gpu; sim/cost/catalog, more with "
      "$MESHSCOPE_CATALOG):\n");
  print_table(hw_rows);
  std::printf("\nframework profiles (a config's framework; sim/cost/frameworks):\n");
  print_table(fw_rows);
  std::printf(
      "\nThe published runs are the development rows the ranges `predict` prints come from "
      "(docs/ACCURACY.md, section 2). `meshscope catalog NAME`: every figure of one of them "
      "with its source.\n");
}

void show(const std::string& name, bool json_out) {
  const std::vector<std::string> hardware = cost::list_hardware(),
                                 frameworks = cost::list_frameworks();
  // A file of its own (a config's "cluster": {"gpu": "FILE.json"}, what calibrate
  // --write-hardware writes): a hardware entry if it reads as one, else a framework profile.
  const bool is_file = name.ends_with(".json");
  bool file_is_hw = false;
  if (is_file) {
    // A hardware entry has peak_flops, a framework profile none: the entry's own reader below
    // then says what is wrong with the file.
    try {
      const json j = traces::load_json_file(name, "hardware file");
      file_is_hw = !j.is_object() || j.contains("peak_flops");
      // A predict config (it says what it models) is neither: said so, not read as a profile
      // whose first key is unknown.
      if (j.is_object() && j.contains("model") && !j.contains("peak_flops"))
        throw UserError(name +
                        ": a predict config (it has 'model'), not a hardware entry or framework "
                        "profile: give it to `meshscope predict --config`; the entry and profile "
                        "it names are its cluster.gpu and framework");
    } catch (const UserError&) {
      throw;
    } catch (const std::exception&) {
      file_is_hw = true;
    }
  }
  const bool is_hw =
      is_file ? file_is_hw : std::find(hardware.begin(), hardware.end(), name) != hardware.end();
  const bool is_fw =
      is_file ? !file_is_hw
              : std::find(frameworks.begin(), frameworks.end(), name) != frameworks.end();
  if (!is_hw && !is_fw) {
    std::string known;
    for (const auto& n : hardware) known += (known.empty() ? "" : ", ") + n;
    std::string profiles;
    for (const auto& n : frameworks) profiles += (profiles.empty() ? "" : ", ") + n;
    throw UserError("no hardware entry or framework profile named '" + traces::printable(name) +
                    "'; hardware: " + known + "; frameworks: " + profiles);
  }
  const std::string path =
      is_file ? name
      : is_hw ? cost::find_json_in(name, cost::catalog_dirs(), "hardware entry", "")
              : cost::find_json_in(name, cost::framework_dirs(), "framework profile", "");
  std::vector<std::string> sources;
  std::string description;
  std::map<std::string, int> runs;
  bool cpu = false;
  if (is_hw) {
    const cost::Hardware hw = cost::find_hardware(name);
    sources = hw.sources;
    description = hw.description;
    cpu = hw.kind == "cpu";
    const auto all = development_runs();
    if (const auto it = all.find(name); it != all.end() && !is_file) runs = it->second;
  } else {
    const cost::Framework fw = cost::find_framework(name);
    sources = fw.sources;
    description = fw.description;
    for (const auto& [hardware, r] : fw.residuals)
      if (r.rows > 0 && !is_file) runs[hardware] = r.rows;
  }
  // Read as an entry above, so it is well-formed JSON here.
  const auto figs = cost::file_figures(traces::load_json_file(path));
  if (json_out) {
    json out = {{"name", name},
                {"kind", is_hw ? "hardware" : "framework"},
                {"file", path},
                {"description", description},
                {"development_runs", runs},
                {"figures", json::array()}};
    for (const auto& [key, value] : figs)
      out["figures"].push_back(
          {{"key", key}, {"value", value}, {"source", cost::source_clause(sources, key)}});
    std::cout << json_text(out) << "\n";
    return;
  }
  std::printf("%s (%s, %s)\n%s\n", name.c_str(), is_hw ? "hardware entry" : "framework profile",
              path.c_str(), description.c_str());
  std::string behind;
  for (const auto& [key, rows] : runs)
    behind += (behind.empty() ? "" : ", ") +
              (is_hw ? key + " " + std::to_string(rows) : std::to_string(rows) + " on " + key);
  if (is_hw && !runs.empty()) behind = std::to_string(total(runs)) + " (" + behind + ")";
  std::printf("published runs behind it: %s\n\n",
              !behind.empty() ? behind.c_str()
              : is_file       ? "none (a file of its own, not the catalog's entry)"
              : cpu ? "none (the CPU backend: predictions on it print no range; calibrate it, "
                      "docs/ACCURACY.md section 3)"
                    : "none (a what-if: predictions print every hardware's range)");
  for (const auto& [key, value] : figs) {
    const std::string source = cost::source_clause(sources, key);
    std::printf("%s = %s\n    %s\n", key.c_str(), json_text(value, -1).c_str(),
                source.empty() ? "(no source line names it)" : source.c_str());
  }
}

}  // namespace

void add_catalog_command(CLI::App& app) {
  auto args = std::make_shared<CatalogArgs>();
  CLI::App* cmd = app.add_subcommand(
      "catalog",
      "List the hardware entries (a config's cluster.gpu) and framework profiles (its framework) "
      "with the published runs behind each; with NAME, every figure of one of them beside what "
      "its sources say");
  CLI::Option* name = cmd->add_option(
      "NAME", args->name,
      "a hardware entry or framework profile (see the list), or a .json file of either");
  cmd->add_flag("--json", args->json_out, "print JSON");
  cmd->callback([args, name] {
    if (name->count() > 0 && args->name.empty())
      throw UserError("catalog: NAME is empty (leave it out for the list)");
    if (args->name.empty())
      list(args->json_out);
    else
      show(args->name, args->json_out);
  });
}

}  // namespace meshscope::cli
