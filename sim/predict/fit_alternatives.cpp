// Recomputation and ZeRO stages tried on a configuration that does not fit memory.
#include "sim/predict/fit_alternatives.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "sim/cost/framework.h"

namespace meshscope::predict {
namespace {

struct Recomputation {
  model::Recompute mode;
  int every;
};

std::vector<Recomputation> recomputations(const PredictConfig& c) {
  std::vector<Recomputation> out;
  for (const std::string& name : framework_of(c).recompute) {
    const auto mode = model::parse_recompute(name);
    if (!mode) continue;
    out.push_back({*mode, 1});
    if (*mode == model::Recompute::kFull)
      for (int every : {2, 4}) out.push_back({*mode, every});
  }
  return out;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The keys the alternatives vary, as the messages name them.
const char* varied_keys(const FitAlternatives& f) {
  return f.zero_varied ? "options.recompute and options.zero" : "options.recompute";
}

}  // namespace

FitAlternatives fit_alternatives(const PredictConfig& c, SimulateOptions o) {
  o.engine_only_if_fits = true;
  o.build_timeline = false;
  o.breakdown = false;
  FitAlternatives out;
  // As far as the stack goes: the stages it runs (zero_stages; Megatron-LM of 2022 none but 0),
  // and beside pipeline parallelism DeepSpeed's pipeline engine stops at ZeRO-1 (pipelined_zero).
  const cost::Framework framework = framework_of(c);
  int top_zero = c.mesh.dp > 1 ? 3 : c.zero;
  if (c.mesh.pp > 1) top_zero = std::max(c.zero, std::min(top_zero, framework.pipelined_zero));
  std::vector<int> stages = {c.zero};
  for (int zero = c.zero + 1; zero <= top_zero; ++zero)
    if (framework.runs_zero(zero)) stages.push_back(zero);
  out.zero_varied = stages.size() > 1;
  bool any = false;
  for (const Recomputation& r : recomputations(c)) {
    for (int zero : stages) {
      if (r.mode == c.recompute && r.every == c.recompute_every && zero == c.zero) continue;
      PredictConfig alt = c;
      alt.recompute = r.mode;
      alt.recompute_every = r.every;
      alt.zero = zero;
      FitAlternative a;
      if (r.mode != c.recompute)
        a.changes.push_back({"options.recompute", quoted(model::name(r.mode))});
      if (r.every != c.recompute_every)
        a.changes.push_back({"options.recompute_every", std::to_string(r.every)});
      if (zero != c.zero) a.changes.push_back({"options.zero", std::to_string(zero)});
      try {
        a.summary = simulate(alt, o).summary;
      } catch (const std::exception&) {
        continue;  // a combination the model or the simulator refuses is no way to fit
      }
      ++out.tried;
      if (a.summary.fits) {
        out.fitting.push_back(std::move(a));
      } else if (!any || a.summary.peak_memory_bytes < out.least_memory.summary.peak_memory_bytes) {
        out.least_memory = std::move(a);
        any = true;
      }
    }
  }
  // Fastest first; of those alike in step and memory (a change that changes nothing here, such
  // as Megatron-LM's selective recomputation under flash attention), only the one with the fewest
  // changes.
  std::stable_sort(out.fitting.begin(), out.fitting.end(),
                   [](const FitAlternative& a, const FitAlternative& b) {
                     if (a.summary.step_time_s != b.summary.step_time_s)
                       return a.summary.step_time_s < b.summary.step_time_s;
                     return a.changes.size() < b.changes.size();
                   });
  std::vector<FitAlternative> distinct;
  for (FitAlternative& a : out.fitting) {
    const bool alike = std::any_of(distinct.begin(), distinct.end(), [&](const FitAlternative& d) {
      return d.summary.step_time_s == a.summary.step_time_s &&
             d.summary.peak_memory_bytes == a.summary.peak_memory_bytes;
    });
    if (!alike) distinct.push_back(std::move(a));
  }
  out.fitting = std::move(distinct);
  return out;
}

std::string describe(const FitAlternative& a) {
  std::string s;
  for (const auto& [key, value] : a.changes) s += (s.empty() ? "" : ", ") + key + " " + value;
  return s;
}

std::string format_fit_alternatives(const FitAlternatives& f, const Summary& base, int top) {
  auto gib = [](double bytes) { return bytes / (1024.0 * 1024 * 1024); };
  char line[512];
  std::string out;
  if (f.fitting.empty()) {
    if (f.tried == 0) return out;
    std::snprintf(line, sizeof line,
                  "no combination of %s fits (%d tried): the least memory, %.1f GiB of %.1f, "
                  "with %s; more pipeline or tensor parallelism, or a smaller batch.micro, "
                  "reduces it further\n",
                  varied_keys(f), f.tried,
                  gib(static_cast<double>(f.least_memory.summary.peak_memory_bytes)),
                  gib(base.memory_capacity_bytes), describe(f.least_memory).c_str());
    return line;
  }
  std::snprintf(line, sizeof line,
                "what would fit, the rest of the configuration unchanged (fastest first; %zu of %d "
                "combinations of %s fit, those alike shown once):\n",
                f.fitting.size(), f.tried, varied_keys(f));
  out += line;
  size_t width = 0;
  for (size_t i = 0; i < f.fitting.size() && static_cast<int>(i) < top; ++i)
    width = std::max(width, describe(f.fitting[i]).size());
  for (size_t i = 0; i < f.fitting.size() && static_cast<int>(i) < top; ++i) {
    const Summary& s = f.fitting[i].summary;
    const double change = base.step_time_s > 0 ? 100 * (s.step_time_s / base.step_time_s - 1) : 0;
    std::snprintf(line, sizeof line, "  %-*s  step %.4g s (%+.1f%%)  %.1f GiB\n",
                  static_cast<int>(width), describe(f.fitting[i]).c_str(), s.step_time_s, change,
                  gib(static_cast<double>(s.peak_memory_bytes)));
    out += line;
  }
  return out;
}

nlohmann::json to_json(const FitAlternatives& f) {
  nlohmann::json out = nlohmann::json::array();
  for (const FitAlternative& a : f.fitting) {
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [key, value] : a.changes) {
      const std::string name = key.substr(key.find('.') + 1);
      options[name] = value.front() == '"' ? nlohmann::json(value.substr(1, value.size() - 2))
                                           : nlohmann::json(std::stoi(value));
    }
    out.push_back({{"options", options},
                   {"step_time_s", a.summary.step_time_s},
                   {"tokens_per_s", a.summary.tokens_per_s},
                   {"mfu", a.summary.mfu},
                   {"peak_memory_bytes", a.summary.peak_memory_bytes}});
  }
  return out;
}

}  // namespace meshscope::predict
