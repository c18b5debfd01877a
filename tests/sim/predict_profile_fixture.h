// The configs and profiles the framework-config tests build: a small GPT on eight H100s, its
// prediction, and profiles written to the test's temporary folder.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/compute_model.h"
#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"
#include "sim/predict/workload_costs.h"
#include "tests/remove_at_exit.h"

namespace meshscope::predict::testing {

inline nlohmann::json tiny_gpt() {
  return nlohmann::json::parse(
      R"({"model": {"kind": "gpt", "layers": 4, "hidden": 1024, "heads": 16, "seq": 2048, "vocab": 51200},
                         "mesh": {"dp": 8}, "batch": {"global": 16, "micro": 1},
                         "cluster": {"gpu": "h100-sxm"}})");
}

// The prediction for config `j` (read as cfg.json), without a timeline.
inline Summary summary_of(const nlohmann::json& j) {
  return simulate(parse_config(j, "cfg.json"), {.build_timeline = false}).summary;
}

// One streaming pass of `bytes` per parameter over the first stage's parameters of `c`, priced at
// the h100-sxm entry's memory rate: what a profile's per-parameter pass adds to each microbatch.
inline double parameter_pass_s(const PredictConfig& c, double bytes) {
  const WorkloadCosts w = workload_costs(c);
  const cost::ComputeModel compute(cost::find_hardware("h100-sxm"), c.precision);
  return compute.stream_seconds(static_cast<double>(w.dense_parameters[0]) * bytes);
}

// Writes a framework profile `name` to a file of this process's, with the keys `more` (each
// after a comma) besides its name and sources; returns its path.
inline std::string write_profile(const std::string& name, const std::string& more) {
  const std::string path = meshscope::testing::process_temp_path(name + ".json").string();
  std::ofstream(path) << R"({"name": ")" << name << R"(", "sources": ["test"])" << more << "}";
  return path;
}

// The same with its gradient reductions and parameter gathers exposed.
inline std::string exposed_profile(const std::string& name, const std::string& more) {
  return write_profile(name, R"(, "grad_reduce": "exposed", "param_gather": "exposed", )" + more);
}

// A copy of the shipped profile `framework` that runs every ZeRO stage (its "zero_stages"
// dropped), written to the test's temporary folder; returns its path. For tests of ZeRO's
// mechanics under the figures of a stack that itself runs fewer (megatron-2022: stage 0 alone).
inline std::string with_every_zero_stage(const std::string& framework) {
  for (const std::string& dir : cost::framework_dirs()) {
    std::ifstream in(dir + "/" + framework + ".json");
    if (!in) continue;
    nlohmann::json j = nlohmann::json::parse(in);
    j.erase("zero_stages");
    j["name"] = framework + "-every-zero-stage";
    // ctest runs each test in a process of its own, several at once, all with one TempDir: a path
    // of this process's, written whole before it is read (a reader beside a writer of one shared
    // path once read it empty).
    const std::string path =
        meshscope::testing::process_temp_path(j["name"].get<std::string>() + ".json").string();
    const std::string part = path + ".part";
    std::ofstream(part) << j.dump();
    std::filesystem::rename(part, path);
    return path;
  }
  ADD_FAILURE() << "no shipped profile " << framework;
  return framework;
}

}  // namespace meshscope::predict::testing
