// Recovering the schedule a torch.distributed.pipelining job ran from its traces.
#include "cli/torch_trace_schedule.h"
#include "cli/read_progress.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "cli/commands.h"
#include "sim/schedule/validator.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::cli {
namespace {

// The k > 1 for which each rank's compute and transfers are k copies of one sequence (the same k
// on every rank; the reader's one STEP after them left out), else 1.
int repeats_of(const std::vector<std::vector<schedule::Action>>& program) {
  std::vector<std::vector<schedule::Action>> ranks;
  for (const auto& actions : program) {
    ranks.emplace_back();
    for (const schedule::Action& a : actions) {
      if (schedule::is_compute(a.kind) || schedule::is_p2p(a.kind)) ranks.back().push_back(a);
    }
  }
  if (ranks.empty() || ranks.front().empty()) return 1;
  for (size_t k = 2; k <= ranks.front().size(); ++k) {
    const bool all = std::all_of(ranks.begin(), ranks.end(), [&](const auto& rank) {
      if (rank.empty() || rank.size() % k != 0) return false;
      const size_t period = rank.size() / k;
      for (size_t i = period; i < rank.size(); ++i) {
        if (!(rank[i] == rank[i - period])) return false;
      }
      return true;
    });
    if (all) return static_cast<int>(k);
  }
  return 1;
}

}  // namespace

traces::Timeline load_torch_job(const std::string& path, const std::string& command) {
  try {
    const std::vector<std::filesystem::path> paths = {path};
    traces::ImportReport report;
    traces::Timeline t = traces::load_traces(paths, options_reporting_progress(command), &report);
    // A pipeline whose ranks' steps lie apart has no measured step to replay or recover: its
    // ranks are of different runs (a swapped file), and every figure would compare with a step
    // as long as the distance between them.
    if (report.count(traces::ImportWarning::kRankStepsApart) > 0) {
      const size_t kind = static_cast<size_t>(traces::ImportWarning::kRankStepsApart);
      throw UserError(path + ": " + report.first_where[kind] +
                      ": the ranks of one pipeline job run their steps together; give the "
                      "files of one run");
    }
    // What the import skipped, as analyze says it (events of a rank skipped had been behind a
    // bare "no trace of rank 2").
    for (const std::string& line : report.lines(/*malformed_only=*/true))
      std::fprintf(stderr, "meshscope: warning: %s: %s\n", path.c_str(), line.c_str());
    return t;
  } catch (const traces::ImportError& e) {
    throw UserError(e.what());
  }
}

std::string untraced_ranks_text(const traces::Timeline& t) {
  const std::vector<int> missing = traces::importer::torch_untraced_ranks(t);
  if (missing.empty()) return "";
  std::string ranks;
  for (const int r : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  return "no trace of rank" + std::string(missing.size() > 1 ? "s " : " ") + ranks +
         ", which the job's process groups name beside the traced ranks";
}

RecoveredSchedule recover_torch_schedule(const traces::Timeline& t, const std::string& path) {
  // Ranks missing at the end would leave a shorter pipeline that replays without complaint.
  if (const std::string missing = untraced_ranks_text(t); !missing.empty()) {
    throw UserError(path + ": " + missing +
                    ": the pipeline needs every one of its ranks' traces (is a file missing, or "
                    "does one end early?)");
  }
  RecoveredSchedule recovered;
  try {
    // Groups the traces name (their process groups) are the pipeline as they stand; their
    // untraced members were refused above.
    const bool named = !traces::importer::per_rank_metadata(t, "process_groups").empty();
    recovered = predict::recover_schedule(traces::importer::torch_action_orders(t),
                                          traces::importer::torch_pipeline_groups(t), path, named);
  } catch (const predict::RecoveryError& e) {
    throw UserError(e.what());
  }
  // A rank whose trace ends inside its step (the profiler stopped, the process died) holds only
  // the actions before that: the schedule read from it would leave microbatches short, and a
  // replay would cost their missing work at nothing.
  const schedule::ValidationResult check = schedule::validate(recovered.parsed.schedule);
  if (!check.ok()) {
    const auto& ranks = recovered.parsed.schedule.ranks;
    // A job that ran no backward (torch's _ScheduleForwardOnly, an inference pipeline) is no
    // truncated training step: said as what it is.
    const bool forward_only = std::none_of(ranks.begin(), ranks.end(), [](const auto& rank) {
      return std::any_of(rank.begin(), rank.end(), [](const schedule::Action& a) {
        return a.kind == schedule::ActionKind::kBackward ||
               a.kind == schedule::ActionKind::kInputGrad ||
               a.kind == schedule::ActionKind::kWeightGrad;
      });
    });
    if (forward_only) {
      throw UserError(path +
                      ": the job ran forwards only (no backward on any rank: torch's "
                      "_ScheduleForwardOnly, or an inference pipeline); --from-trace recovers and "
                      "replays training steps");
    }
    // Several iterations without ProfilerStep markers between them (a plain `with profile():`,
    // no prof.step()) read as one step that does each microbatch's work k times.
    if (const int k = repeats_of(ranks); k > 1) {
      throw UserError(path + ": the traces hold " + std::to_string(k) +
                      " iterations of the schedule and no ProfilerStep marks between them (the "
                      "profiler's prof.step() writes them): give a trace of one step, or profile "
                      "with prof.step() after each");
    }
    std::string counts;
    for (size_t r = 0; r < ranks.size(); ++r) {
      size_t compute = 0;
      for (const schedule::Action& a : ranks[r]) compute += schedule::is_compute(a.kind);
      counts += (counts.empty() ? "" : ", ") + std::to_string(compute);
    }
    throw UserError(path + ": the schedule these traces hold is not a whole one (" +
                    check.error->message + "); compute actions by pipeline rank: " + counts +
                    ". Does a rank's trace end inside its step (the profiler stopped, or the "
                    "process died)?");
  }
  return recovered;
}

}  // namespace meshscope::cli
