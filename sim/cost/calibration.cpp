// Calibration files: JSON, written whole or not at all.
#include "sim/cost/calibration.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

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

// `key`.`name`: a number; 0 when absent. A value of another type is named with its key (the
// JSON library's "[json.exception.type_error.302] type must be number" named its parent).
double number_of(const json& j, const char* name, const std::string& path, const std::string& key) {
  const auto v = j.find(name);
  if (v == j.end()) return 0.0;
  if (!v->is_number())
    throw std::runtime_error(path + ": key '" + key + "." + name + "': must be a number, not " +
                             std::string(v->type_name()));
  return v->get<double>();
}

// `key`: a list of strings; empty when absent.
std::vector<std::string> strings_of(const json& j, const char* key, const std::string& path) {
  const auto v = j.find(key);
  if (v == j.end()) return {};
  if (!v->is_array() ||
      !std::all_of(v->begin(), v->end(), [](const json& s) { return s.is_string(); }))
    throw std::runtime_error(path + ": key '" + key + "': must be a list of strings");
  return v->get<std::vector<std::string>>();
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
  if (!j.is_object()) throw std::runtime_error(where + ": must be an object");
  LinkFit f;
  f.alpha_ns = number_of(j, "alpha_ns", path, key);
  f.bandwidth_bytes_per_s = number_of(j, "bandwidth_bytes_per_s", path, key);
  f.samples = samples_of(j, path, key);
  f.rms_error = number_of(j, "rms_error", path, key);
  // As a hardware file's link (kMaxDelayNs, kMaxBytesPerS); a bandwidth of 0 is a link not fitted.
  // A bandwidth of 1e-6 B/s had put transfers past the engine's integer nanoseconds, and the
  // prediction came out faster than the fit's.
  if (!(f.alpha_ns >= 0 && f.alpha_ns <= kMaxDelayNs))
    throw std::runtime_error(path + ": key '" + key + ".alpha_ns': must be in [0, 1e9] (1 s)");
  if (!(f.bandwidth_bytes_per_s == 0 ||
        (f.bandwidth_bytes_per_s >= 1 && f.bandwidth_bytes_per_s <= kMaxBytesPerS)))
    throw std::runtime_error(path + ": key '" + key +
                             ".bandwidth_bytes_per_s': must be 0 (not fitted) or in [1, 1e16]");
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
    if (j.contains("precision") && !j.at("precision").is_string())
      throw std::runtime_error(path + ": key 'precision': must be a string (bf16, fp16, ...)");
    c.precision = j.value("precision", "");
    if (!c.precision.empty() && !parse_precision(c.precision))
      throw std::runtime_error(path + ": key 'precision': '" + c.precision +
                               "' is not bf16, fp16, fp32 or tf32");
    c.traces = strings_of(j, "traces", path);
    c.fitted_on = strings_of(j, "fitted_on", path);
    key = "created";
    if (j.contains("created") && !j.at("created").is_string())
      throw std::runtime_error(path + ": key 'created': must be a string (a date)");
    c.created = j.value("created", "");
    if (j.contains("compute") && !j.at("compute").is_object())
      throw std::runtime_error(path + ": key 'compute': must be an object of phases");
    if (j.contains("compute")) {
      for (const auto& [name, v] : j.at("compute").items()) {
        key = "compute." + name;
        if (!v.is_object())
          throw std::runtime_error(path + ": key '" + key + "': must be an object");
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
        f.flops_per_s = number_of(v, "flops_per_s", path, key);
        f.overhead_ns = number_of(v, "overhead_ns", path, key);
        f.efficiency = number_of(v, "efficiency", path, key);
        f.samples = samples_of(v, path, key);
        f.rms_error = number_of(v, "rms_error", path, key);
        f.model_scale = number_of(v, "model_scale", path, key);
        // As a hardware file's peaks and delays (kMaxFlops, kMaxDelayNs); 0 is a figure not
        // fitted. A model_scale a million times the op model's time either way is no fit of it
        // (assumption: the CPU runs of tests/fixtures fit 0.7 and 1.5), and 1e300 had put a
        // stage's time past the engine's integer nanoseconds.
        const auto within = [&](const char* name, double v, double lo, double hi,
                                const char* range) {
          if (!(v == 0 || (v >= lo && v <= hi)))
            throw std::runtime_error(path + ": key '" + key + "." + name + "': must be 0 (not " +
                                     "fitted) or in " + range);
        };
        within("flops_per_s", f.flops_per_s, 1, kMaxFlops, "[1, 1e18]");
        within("model_scale", f.model_scale, 1e-6, 1e6, "[1e-6, 1e6]");
        within("overhead_ns", f.overhead_ns, 0, kMaxDelayNs, "[0, 1e9] (1 s)");
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

void check_calibration(const Calibration& c) {
  try {
    parse_calibration(json::parse(to_json(c)), "the fit");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) +
                             ": a calibration predict would refuse (the spans' times or FLOPs are "
                             "far off, or they ran elsewhere); nothing written");
  }
}

void save_calibration(const Calibration& c, const std::string& path) {
  check_calibration(c);
  traces::write_file_atomic(path, to_json(c));
}

}  // namespace meshscope::cost
