// Parses "meshscope_run" with nlohmann (the member is small and read once per file).
#include "traces/import/chrome_run_descriptor.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "traces/import/import_types.h"
#include "traces/number_text.h"

namespace meshscope::traces::importer {

RunDescriptor read_run_descriptor(std::string_view json, const std::filesystem::path& file,
                                  int64_t offset, bool* typed_facts) {
  const auto fail = [&](const std::string& field, const std::string& why) {
    throw ImportError(file, offset, "meshscope_run." + field + ": " + why);
  };
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) fail("(value)", "not a JSON object");
  const auto integer = [&](const nlohmann::json& o, const std::string& prefix, const char* key,
                           int64_t max) -> int64_t {
    if (!o.contains(key)) return 0;
    const auto& v = o[key];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(max)) ||
        v.get<int64_t>() < 0 || v.get<int64_t>() > max) {
      fail(prefix + key, "must be an integer in [0, " + std::to_string(max) + "]");
    }
    return v.get<int64_t>();
  };
  const auto text = [&](const nlohmann::json& o, const std::string& prefix,
                        const char* key) -> std::string {
    if (!o.contains(key)) return {};
    if (!o[key].is_string()) fail(prefix + key, "must be a string");
    return o[key].get<std::string>();
  };
  constexpr int64_t kInt = std::numeric_limits<int32_t>::max();
  constexpr int64_t kSize = std::numeric_limits<int64_t>::max();
  RunDescriptor r;
  if (const std::string s = text(j, "", "source"); !s.empty()) {
    const auto source = parse_run_source(s);
    if (!source) fail("source", "'" + s + "' is not a source this build knows");
    r.source = *source;
  }
  r.backend = text(j, "", "backend");
  if (j.contains("mesh")) {
    const auto& m = j["mesh"];
    if (!m.is_object()) fail("mesh", "must be an object");
    r.mesh.dp = static_cast<int>(integer(m, "mesh.", "dp", kInt));
    r.mesh.pp = static_cast<int>(integer(m, "mesh.", "pp", kInt));
    r.mesh.tp = static_cast<int>(integer(m, "mesh.", "tp", kInt));
  }
  r.family = text(j, "", "family");
  r.schedule = text(j, "", "schedule");
  r.microbatches = static_cast<int>(integer(j, "", "microbatches", kInt));
  r.stages = static_cast<int>(integer(j, "", "stages", kInt));
  r.virtual_stages = static_cast<int>(integer(j, "", "virtual_stages", kInt));
  if (j.contains("workload")) {
    const auto& w = j["workload"];
    if (!w.is_object()) fail("workload", "must be an object");
    if (const std::string k = text(w, "workload.", "kind"); !k.empty()) {
      const auto kind = parse_model_kind(k);
      if (!kind) fail("workload.kind", "'" + k + "' is not a model kind this build knows");
      r.workload.kind = *kind;
    }
    r.workload.layers = integer(w, "workload.", "layers", kSize);
    r.workload.hidden = integer(w, "workload.", "hidden", kSize);
    r.workload.heads = integer(w, "workload.", "heads", kSize);
    r.workload.seq = integer(w, "workload.", "seq", kSize);
    r.workload.vocab = integer(w, "workload.", "vocab", kSize);
    r.workload.image = integer(w, "workload.", "image", kSize);
    r.workload.batch = integer(w, "workload.", "batch", kSize);
    r.workload.experts = integer(w, "workload.", "experts", kInt);
    r.workload.top_k = integer(w, "workload.", "top_k", kInt);
    r.workload.ep = integer(w, "workload.", "ep", kInt);
    if (w.contains("capacity_factor")) {
      const auto& v = w["capacity_factor"];
      if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1e6)
        fail("workload.capacity_factor", "must be a number in [0, 1e6]");
      r.workload.capacity_factor = v.get<double>();
    }
  }
  r.hardware = text(j, "", "hardware");
  if (typed_facts != nullptr) *typed_facts = j.contains("cores");
  r.cores = static_cast<int>(integer(j, "", "cores", kInt));
  r.gpu = text(j, "", "gpu");
  r.process_group_backend = text(j, "", "process_group_backend");
  if (j.contains("replicas_simulated_once")) {
    if (!j["replicas_simulated_once"].is_boolean())
      fail("replicas_simulated_once", "must be true or false");
    r.replicas_simulated_once = j["replicas_simulated_once"].get<bool>();
  }
  r.sim_config = text(j, "", "sim_config");
  return r;
}

namespace {

// An older file's fact: the key's value, else the one value every merged rank's "rank N.key"
// gives (multi_rank.cpp prefixes each rank's keys so); empty when they differ or none says it.
std::string old_fact(const std::map<std::string, std::string>& metadata, const std::string& key) {
  if (const auto it = metadata.find(key); it != metadata.end()) return it->second;
  std::optional<std::string> common;
  for (const auto& [k, v] : metadata) {
    if (!k.starts_with("rank ") || !k.ends_with("." + key)) continue;
    const std::string_view number(k.data() + 5, k.size() - 5 - key.size() - 1);
    if (!parse_whole_int(number)) continue;
    if (common && *common != v) return {};
    common = v;
  }
  return common.value_or(std::string());
}

}  // namespace

void read_run_from_old_metadata(const std::map<std::string, std::string>& metadata,
                                RunDescriptor& run) {
  if (run.cores == 0) {
    const std::optional<int64_t> cores = parse_whole_int(old_fact(metadata, "cores"));
    if (cores && *cores > 0 && *cores <= std::numeric_limits<int32_t>::max())
      run.cores = static_cast<int>(*cores);
  }
  if (run.gpu.empty()) run.gpu = old_fact(metadata, "gpu");
  // "backend" is also the display text of meshscope's own runs ("cpu (2 threads)", "sim"): a
  // process group's only in a trace that was imported.
  const bool imported = run.source == RunSource::kKineto || run.source == RunSource::kChrome ||
                        run.source == RunSource::kNsys || run.source == RunSource::kUnknown;
  if (run.process_group_backend.empty() && imported)
    run.process_group_backend = old_fact(metadata, "backend");
  if (metadata.count("replicas") > 0) run.replicas_simulated_once = true;
  if (const auto config = metadata.find("config");
      run.sim_config.empty() && run.source == RunSource::kSim && config != metadata.end())
    run.sim_config = config->second;
}

}  // namespace meshscope::traces::importer
