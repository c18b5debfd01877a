// collective_fit_beyond_its_groups, uneven_layer_splits, settings_that_do_little and
// schedules_the_framework_lacks.
#include "cli/predict_notes.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "sim/cost/framework.h"
#include "sim/model/gpt.h"
#include "sim/model/partition.h"
#include "sim/schedule/families.h"

namespace meshscope::cli {

std::string collective_fit_beyond_its_groups(
    const cost::Calibration& cal, const std::vector<const predict::PredictConfig*>& rows) {
  const int fitted = cal.collective.max_ranks;
  if (fitted <= 0 || cal.collective.bandwidth_bytes_per_s <= 0) return "";
  int largest = 0;
  for (const predict::PredictConfig* c : rows)
    largest = std::max({largest, c->mesh.dp * c->cp, c->mesh.tp});
  if (largest <= fitted) return "";
  return "the calibration's collective fit saw groups of up to " + std::to_string(fitted) +
         " ranks and prices groups of up to " + std::to_string(largest) +
         " here, whatever their links: an extrapolation\n";
}

std::string uneven_layer_splits(const std::vector<const predict::PredictConfig*>& rows) {
  std::set<std::pair<int64_t, int>> said;  // (layers, stages)
  std::string out;
  for (const predict::PredictConfig* c : rows) {
    const bool gpt = c->model == predict::ModelKind::kGpt;
    if (!gpt && c->model != predict::ModelKind::kMlp && c->model != predict::ModelKind::kMoe)
      continue;
    const int64_t layers = gpt ? c->gpt.layers : c->mlp_layers;
    const int stages = c->mesh.pp * c->virtual_stages;
    if (stages <= 1 || layers % stages == 0 || !c->layers_per_stage.empty() ||
        !said.insert({layers, stages}).second)
      continue;
    std::vector<int> split;
    if (gpt) {
      split = model::split_layers(layers, stages);
    } else {
      for (const model::StageRange& r : model::partition_units(static_cast<int>(layers), stages))
        split.push_back(r.size());
    }
    std::string text;
    for (size_t s = 0; s < split.size(); ++s) {
      if (split.size() > 12 && s == 6) {
        text += "/...";
        s = split.size() - 3;
      }
      text += (s == 0 ? "" : "/") + std::to_string(split[s]);
    }
    out += "model.layers " + std::to_string(layers) + " over " + std::to_string(stages) +
           " pipeline stages (pp " + std::to_string(c->mesh.pp) +
           (c->virtual_stages > 1 ? " x virtual_stages " + std::to_string(c->virtual_stages) : "") +
           ") do not divide evenly: split " + text +
           " (Megatron-LM refuses such a pipeline; model.layers_per_stage sets the split)\n";
  }
  return out;
}

std::string settings_that_do_little(const std::vector<const predict::PredictConfig*>& rows) {
  bool one_microbatch = false, lone_sequence_parallel = false, lone_zero = false;
  std::string selective_under_flash;  // the framework whose selective recompute has nothing to do
  for (const predict::PredictConfig* c : rows) {
    one_microbatch = one_microbatch || (c->mesh.pp > 1 && c->microbatches() == 1);
    lone_sequence_parallel = lone_sequence_parallel || (c->sequence_parallel && c->mesh.tp == 1);
    lone_zero = lone_zero || (c->zero > 0 && c->zero_shards() == 1);
    if (c->recompute == model::Recompute::kSelective && c->flash_attention &&
        selective_under_flash.empty()) {
      try {
        if (!predict::framework_of(*c).selective_recomputes_flash)
          selective_under_flash = c->framework;
      } catch (const std::exception&) {
        // The row's profile could not be read: its prediction said so.
      }
    }
  }
  std::string out;
  if (one_microbatch)
    out +=
        "one microbatch per replica through a pipeline (batch.global / (batch.micro x dp) = 1; "
        "batch.global defaults to batch.micro x dp): its stages run in turn, so most of the step "
        "is bubble; a larger batch.global gives the pipeline microbatches to overlap\n";
  if (lone_sequence_parallel)
    out +=
        "options.sequence_parallel does nothing with tp 1: it splits the sequence over the tp "
        "ranks (Megatron-LM turns it off with a warning)\n";
  if (lone_zero)
    out +=
        "options.zero does nothing over one data-parallel rank: it shards the optimizer state, "
        "gradients and parameters over dp x cp, here 1\n";
  if (!selective_under_flash.empty())
    out += "options.recompute \"selective\" does nothing under flash attention in " +
           selective_under_flash +
           ": the kernel keeps no attention scores to drop, and this framework does not rerun it "
           "(its profile's selective_recomputes_flash); \"full\" recomputes whole layers\n";
  return out;
}

std::string schedules_the_framework_lacks(const std::vector<const predict::PredictConfig*>& rows) {
  std::map<std::string, std::set<std::string>> asked;  // framework -> schedules it does not run
  std::map<std::string, std::vector<std::string>> runs;
  for (const predict::PredictConfig* c : rows) {
    if (c->mesh.pp == 1) continue;  // no pipeline: every family runs the same step
    try {
      const cost::Framework f = predict::framework_of(*c);
      const std::string family(schedule::name(c->schedule));
      if (f.runs_schedule(family)) continue;
      asked[f.name].insert(family);
      runs[f.name] = f.schedules;
    } catch (const std::exception&) {
      // The row's profile could not be read: its prediction said so.
    }
  }
  std::string out;
  for (const auto& [framework, families] : asked) {
    std::string theirs, these;
    const std::vector<std::string>& own = runs[framework];
    for (size_t i = 0; i < own.size(); ++i)
      theirs += (i == 0 ? "" : i + 1 == own.size() ? " and " : ", ") + own[i];
    for (const std::string& f : families) these += (these.empty() ? "" : ", ") + f;
    out += framework +
           (own.size() == 1 ? " runs the pipeline schedule " : " runs the pipeline schedules ") +
           theirs + " (its profile's \"schedules\"): the " + these +
           " rows are a what-if of its costs under a schedule it does not run\n";
  }
  return out;
}

}  // namespace meshscope::cli
