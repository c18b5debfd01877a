// Recovering the schedule a torch.distributed.pipelining job ran from its traces.
#include "cli/torch_trace_schedule.h"
#include "cli/read_progress.h"

#include <filesystem>
#include <vector>

#include "cli/commands.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::cli {

traces::Timeline load_torch_job(const std::string& path, const std::string& command) {
  try {
    const std::vector<std::filesystem::path> paths = {path};
    return traces::load_traces(paths, options_reporting_progress(command));
  } catch (const traces::ImportError& e) {
    throw UserError(e.what());
  }
}

RecoveredSchedule recover_torch_schedule(const traces::Timeline& t, const std::string& path) {
  try {
    return predict::recover_schedule(traces::importer::torch_action_orders(t),
                                     traces::importer::torch_pipeline_groups(t), path);
  } catch (const predict::RecoveryError& e) {
    throw UserError(e.what());
  }
}

}  // namespace meshscope::cli
