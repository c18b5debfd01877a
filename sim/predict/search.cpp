// Enumerating and ranking parallel configurations for a GPU budget.
#include "sim/predict/search.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"

namespace meshscope::predict {
namespace {

// Ascending; n is at most kMaxSearchGpus.
std::vector<int> divisors(int64_t n) {
  std::vector<int> low, high;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      low.push_back(static_cast<int>(i));
      if (i * i != n) high.push_back(static_cast<int>(n / i));
    }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

int64_t layers_of(const PredictConfig& c) {
  switch (c.model) {
    case ModelKind::kGpt:
      return c.gpt.layers;
    case ModelKind::kMlp:
    case ModelKind::kMoe:
      return c.mlp_layers;
    case ModelKind::kVgg:
      return 16;
    default:
      return 3;
  }
}

// The catalog entry parse_config read, else the catalog's (a config built in code).
cost::Hardware hardware_of(const PredictConfig& c) {
  return c.hardware.entry && c.hardware.gpu == c.gpu ? *c.hardware.entry
                                                     : cost::find_hardware(c.gpu);
}

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

}  // namespace

std::vector<PredictConfig> search_space(const PredictConfig& base, const SearchOptions& o) {
  if (o.gpus < 1 || o.gpus > kMaxSearchGpus)
    throw std::invalid_argument("--gpus must be in [1, " + std::to_string(kMaxSearchGpus) +
                                "], got " + std::to_string(o.gpus));
  const int per_node =
      base.gpus_per_node > 0 ? base.gpus_per_node : hardware_of(base).devices_per_node;
  const int max_tp = o.max_tp > 0 ? o.max_tp : per_node;
  const int64_t per_cp = o.gpus / base.cp;
  if (per_cp * base.cp != o.gpus)
    throw std::invalid_argument("--gpus must be divisible by mesh.cp");
  // Only the meshes the stack runs (its profile's "lacks").
  const cost::Framework framework = framework_of(base);
  std::vector<PredictConfig> out;
  for (int tp : divisors(per_cp)) {
    if (tp > max_tp || (tp > 1 && !framework.has_tensor_parallel)) continue;
    for (int pp : divisors(per_cp / tp)) {
      if (pp > layers_of(base) || (pp > 1 && !framework.has_pipeline_parallel)) continue;
      const int dp = static_cast<int>(per_cp / tp / pp);
      if (dp % base.ep != 0) continue;
      for (int micro : o.micro_batches) {
        if (base.global_batch % (int64_t{micro} * dp) != 0) continue;
        const int m = static_cast<int>(base.global_batch / (int64_t{micro} * dp));
        struct Sched {
          schedule::Family f;
          int v;
        };
        // The searchable families (families.h), each with the chunk counts it takes among 1, 2
        // and 4 that split the layers evenly; with pp = 1 one schedule, as every family runs the
        // same step there: the config's own where it is a family without a pipeline (dp, tp),
        // so its candidates read as what it asked for, else 1f1b.
        std::vector<Sched> scheds;
        const bool own = pp == 1 && schedule::info(base.schedule).pp_one_only &&
                         schedule::family_rule_violation(base.schedule, {dp, pp, tp}, 1, m).empty();
        if (own) scheds.push_back({base.schedule, 1});
        for (size_t fi = 0; fi < schedule::kFamilies.size() && !own; ++fi) {
          const auto f = static_cast<schedule::Family>(fi);
          if (!schedule::info(f).searchable || (pp == 1 && f != schedule::Family::kOneFOneB))
            continue;
          // The schedules the stack runs (its profile's "schedules"): Megatron-LM has no ZB-V.
          if (pp > 1 && !framework.runs_schedule(schedule::name(f))) continue;
          for (int v : {1, 2, 4}) {
            if (v > 1 && layers_of(base) % (pp * v) != 0) continue;
            // Interleaved 1F1B over microbatches pp does not divide runs in torch, not in
            // Megatron-LM: the search proposes what every stack with the family runs.
            if (f == schedule::Family::kInterleaved && m % pp != 0) continue;
            if (schedule::family_rule_violation(f, {dp, pp, tp}, v, m).empty())
              scheds.push_back({f, v});
          }
        }
        for (const Sched& s : scheds) {
          PredictConfig c = base;
          c.mesh = {dp, pp, tp};
          c.micro_batch = micro;
          c.schedule = s.f;
          c.virtual_stages = s.v;
          c.sequence_parallel = base.sequence_parallel && tp > 1;
          c.tp_comm_overlap = base.tp_comm_overlap && c.sequence_parallel;
          c.layers_per_stage.clear();
          out.push_back(c);
        }
      }
    }
  }
  return out;
}

std::vector<Candidate> search(const PredictConfig& base, const SearchOptions& o,
                              const std::function<void(size_t, size_t)>& progress,
                              SearchReport* report) {
  PredictConfig resolved = base;
  if (!resolved.hardware.entry || resolved.hardware.gpu != resolved.gpu)  // the catalog read once
    resolved.hardware = {base.gpu,
                         std::make_shared<const cost::Hardware>(cost::find_hardware(base.gpu))};
  const std::vector<PredictConfig> space = search_space(resolved, o);
  SearchReport rep;
  rep.candidates = space.size();
  rep.memory_capacity_bytes = resolved.hardware.entry->memory_bytes;
  std::vector<Candidate> fits;
  SimulateOptions so;
  so.build_timeline = false;
  so.calibration = o.calibration;
  so.engine_only_if_fits = o.skip_engine_over_memory;
  so.breakdown = false;
  for (size_t i = 0; i < space.size(); ++i) {
    const PredictConfig& c = space[i];
    try {
      Simulation sim = simulate(c, so);
      if (!sim.summary.fits) {
        if (rep.over_memory++ == 0 || sim.summary.peak_memory_bytes < rep.least_memory_bytes)
          rep.least_memory_bytes = sim.summary.peak_memory_bytes;
      } else {
        Candidate cand;
        cand.config = c;
        cand.summary = std::move(sim.summary);
        cand.label = mesh::to_string(c.mesh) + " micro=" + std::to_string(c.micro_batch) + " " +
                     std::string(schedule::name(c.schedule)) +
                     (c.virtual_stages > 1 ? " v=" + std::to_string(c.virtual_stages) : "");
        fits.push_back(std::move(cand));
      }
    } catch (const std::invalid_argument& e) {
      // This shape does not suit the model (heads over tp, layers over stages): not a candidate.
      if (rep.unsuitable++ == 0) rep.first_unsuitable = e.what();
    }
    if (progress) progress(i + 1, space.size());
  }
  std::stable_sort(fits.begin(), fits.end(), [](const Candidate& a, const Candidate& b) {
    return a.summary.step_time_s < b.summary.step_time_s;
  });
  if (report != nullptr) *report = rep;
  return fits;
}

std::string why_nothing_fits(const PredictConfig& base, const SearchOptions& o,
                             const SearchReport& r) {
  const std::string gpus = std::to_string(o.gpus) + " GPUs";
  if (r.candidates == 0) {
    return "no mesh of " + gpus + " divides batch.global (" + std::to_string(base.global_batch) +
           ") into microbatches: it must be divisible by micro x dp for a micro of " +
           joined(o.micro_batches) +
           " and a dp that with tp (at most GPUs per node) and pp (at most the layers) uses the " +
           gpus;
  }
  if (r.over_memory == 0) {
    return "none of the " + std::to_string(r.candidates) + " configurations of " + gpus +
           " suits the model; the first: " + r.first_unsuitable;
  }
  char b[96];
  std::snprintf(b, sizeof b, "%.1f GiB of the device's %.1f GiB",
                r.least_memory_bytes / 1073741824.0, r.memory_capacity_bytes / 1073741824.0);
  return "no configuration of " + gpus + " fits memory: " + std::to_string(r.over_memory) +
         " simulated, the smallest needs " + b +
         " (options.zero, options.recompute or more GPUs reduce it)";
}

}  // namespace meshscope::predict
