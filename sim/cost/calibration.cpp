// Calibration files: JSON, written whole or not at all.
#include "sim/cost/calibration.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/cost/hardware.h"
#include "traces/atomic_file.h"
#include "traces/json_file.h"

namespace meshscope::cost {
namespace {

using nlohmann::json;

json link_json(const LinkFit& f) {
  json j = {{"alpha_ns", f.alpha_ns},
            {"bandwidth_bytes_per_s", f.bandwidth_bytes_per_s},
            {"samples", f.samples},
            {"rms_error", f.rms_error}};
  if (f.max_ranks > 0) j["group_ranks"] = {f.min_ranks, f.max_ranks};
  if (f.timed_alone > 0) j["timed_alone"] = f.timed_alone;
  return j;
}

// A count (`key`.`member`): a whole number >= 0 that fits an int; 0 when absent.
int whole_of(const json& v, const std::string& path, const std::string& key) {
  const double x = v.is_number() ? v.get<double>() : -1;
  if (!v.is_number() || x < 0 || x > 2147483647.0 || x != std::floor(x))
    throw std::runtime_error(path + ": key '" + key + "': must be a whole number >= 0");
  return static_cast<int>(x);
}

int samples_of(const json& j, const std::string& path, const std::string& key) {
  return j.contains("samples") ? whole_of(j.at("samples"), path, key + ".samples") : 0;
}

LinkFit link_from(const json& j, const std::string& path, const std::string& key) {
  const std::string where = path + ": key '" + key + "'";
  traces::require_known_keys(
      j,
      {"alpha_ns", "bandwidth_bytes_per_s", "samples", "rms_error", "group_ranks", "timed_alone"},
      path, key + ".");
  LinkFit f;
  try {
    f.alpha_ns = j.value("alpha_ns", 0.0);
    f.bandwidth_bytes_per_s = j.value("bandwidth_bytes_per_s", 0.0);
    f.samples = samples_of(j, path, key);
    f.rms_error = j.value("rms_error", 0.0);
  } catch (const json::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  if (f.alpha_ns < 0 || f.bandwidth_bytes_per_s < 0)
    throw std::runtime_error(where + ": alpha_ns and bandwidth_bytes_per_s must be >= 0");
  if (const auto r = j.find("group_ranks"); r != j.end()) {
    if (!r->is_array() || r->size() != 2)
      throw std::runtime_error(path + ": key '" + key +
                               ".group_ranks': must be [smallest, largest] group");
    f.min_ranks = whole_of((*r)[0], path, key + ".group_ranks[0]");
    f.max_ranks = whole_of((*r)[1], path, key + ".group_ranks[1]");
    if (f.min_ranks > f.max_ranks)
      throw std::runtime_error(path + ": key '" + key +
                               ".group_ranks': the smallest group is larger than the largest");
  }
  if (const auto t = j.find("timed_alone"); t != j.end())
    f.timed_alone = whole_of(*t, path, key + ".timed_alone");
  return f;
}

}  // namespace

std::string to_json(const Calibration& c) {
  json phases = json::object();
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const PhaseFit& f = c.phases[i];
    if (f.samples == 0) continue;
    phases[std::string(traces::kPhaseNames[i])] = {
        {"flops_per_s", f.flops_per_s}, {"overhead_ns", f.overhead_ns},
        {"efficiency", f.efficiency},   {"samples", f.samples},
        {"rms_error", f.rms_error},     {"model_scale", f.model_scale}};
  }
  json j = {{"format", "meshscope-calibration"},
            {"version", 1},
            {"hardware", c.hardware},
            {"precision", c.precision},
            {"traces", c.traces},
            {"fitted_on", c.fitted_on},
            {"created", c.created},
            {"compute", phases},
            {"p2p", link_json(c.p2p)},
            {"collective", link_json(c.collective)},
            {"all_to_all", link_json(c.all_to_all)}};
  return j.dump(2) + "\n";
}

Calibration load_calibration(const std::string& path) {
  return parse_calibration(traces::load_json_file(path, "calibration file"), path);
}

Calibration parse_calibration(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("format") || j.at("format") != "meshscope-calibration")
    throw std::runtime_error(path + ": key 'format': not a meshscope calibration file");
  traces::require_known_keys(j,
                             {"format", "version", "hardware", "precision", "traces", "fitted_on",
                              "created", "compute", "p2p", "collective", "all_to_all"},
                             path, "");
  Calibration c;
  std::string key = "version";  // the key being read, for a wrongly typed value
  try {
    if (j.contains("version") && j.at("version") != 1)
      throw std::runtime_error(path + ": key 'version': " + j.at("version").dump() +
                               ", but this meshscope reads version 1");
    key = "hardware";
    // The entry the traces ran on: without it a CPU's fit would price any GPU's work.
    if (!j.contains("hardware") || !j.at("hardware").is_string() ||
        j.at("hardware").get<std::string>().empty())
      throw std::runtime_error(path +
                               ": key 'hardware': missing: the catalog entry the traces ran on "
                               "(`meshscope calibrate --hardware` writes it)");
    c.hardware = j.at("hardware").get<std::string>();
    key = "precision";
    c.precision = j.value("precision", "");
    if (!c.precision.empty() && !parse_precision(c.precision))
      throw std::runtime_error(path + ": key 'precision': '" + c.precision +
                               "' is not bf16, fp16, fp32 or tf32");
    key = "traces";
    if (j.contains("traces")) c.traces = j.at("traces").get<std::vector<std::string>>();
    key = "fitted_on";
    if (j.contains("fitted_on")) c.fitted_on = j.at("fitted_on").get<std::vector<std::string>>();
    key = "created";
    c.created = j.value("created", "");
    if (j.contains("compute")) {
      for (const auto& [name, v] : j.at("compute").items()) {
        key = "compute." + name;
        const auto phase = traces::parse_phase(name);
        if (!phase) throw std::runtime_error(path + ": key '" + key + "': unknown phase");
        if (*phase == traces::Phase::kNone)
          throw std::runtime_error(path + ": key '" + key +
                                   "': no phase: spans without one (forward, backward, "
                                   "input_grad, weight_grad, optimizer) price nothing");
        traces::require_known_keys(
            v, {"flops_per_s", "overhead_ns", "efficiency", "samples", "rms_error", "model_scale"},
            path, key + ".");
        PhaseFit& f = c.phases[static_cast<size_t>(*phase)];
        f.flops_per_s = v.value("flops_per_s", 0.0);
        f.overhead_ns = v.value("overhead_ns", 0.0);
        f.efficiency = v.value("efficiency", 0.0);
        f.samples = samples_of(v, path, key);
        f.rms_error = v.value("rms_error", 0.0);
        f.model_scale = v.value("model_scale", 0.0);
        if (f.flops_per_s < 0 || f.model_scale < 0 || f.overhead_ns < 0)
          throw std::runtime_error(path + ": key '" + key +
                                   "': flops_per_s, model_scale and overhead_ns must be >= 0");
      }
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": key '" + key + "': " + e.what());
  }
  if (j.contains("p2p")) c.p2p = link_from(j.at("p2p"), path, "p2p");
  if (j.contains("collective")) c.collective = link_from(j.at("collective"), path, "collective");
  if (j.contains("all_to_all")) c.all_to_all = link_from(j.at("all_to_all"), path, "all_to_all");
  return c;
}

void save_calibration(const Calibration& c, const std::string& path) {
  traces::write_file_atomic(path, to_json(c));
}

}  // namespace meshscope::cost
