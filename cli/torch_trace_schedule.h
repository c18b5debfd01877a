// Loading a torch.distributed.pipelining job's traces and recovering the schedule it ran
// (sim/predict/recovered_schedule.h), for `schedules --from-trace` and `predict --from-trace`.
#pragma once

#include <string>

#include "sim/predict/recovered_schedule.h"
#include "traces/timeline.h"

namespace meshscope::cli {

using predict::RecoveredSchedule;

// load_traces of a folder (or file), saying how far it is every 10 s as `command`
// (read_progress.h); an unreadable trace is a UserError.
traces::Timeline load_torch_job(const std::string& path, const std::string& command);

// "no trace of ranks 2, 3, which the job's process groups name beside the traced ranks" for the
// ranks importer::torch_untraced_ranks finds; "" when there are none.
std::string untraced_ranks_text(const traces::Timeline& t);

// The schedule of the first pipeline group (with dp > 1 every group runs the same one).
// UserError when the traces hold no torch pipeline actions, miss a rank or hold only part of a
// rank's step; `path` names them.
RecoveredSchedule recover_torch_schedule(const traces::Timeline& t, const std::string& path);

}  // namespace meshscope::cli
