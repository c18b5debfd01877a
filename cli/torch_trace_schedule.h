// The schedule a torch.distributed.pipelining job ran, from its traces (shared by `schedules
// --from-trace` and `predict --from-trace`): each rank's actions in order
// (traces/import/torch_pipeline.h), written as torch's CSV rows (`csv`, byte for byte what torch
// writes for the run) and read as a Schedule. GPipe and 1F1B run no transfer actions of their own
// (their rows are compute and REDUCE_GRAD): their Schedule is read from the compute cells,
// lowered with meshscope's transfers, so that it validates and runs.
#pragma once

#include <string>
#include <vector>

#include "sim/schedule/torch_csv.h"
#include "traces/timeline.h"

namespace meshscope::cli {

struct RecoveredSchedule {
  std::string csv;
  schedule::TorchCsv parsed;
  // The pipeline group recovered (the first; traces/import/torch_pipeline.h
  // torch_pipeline_groups): its global ranks in pipeline-rank order, and how many groups ran.
  std::vector<int> ranks;
  int groups = 1;
};

// load_traces of a folder (or file); an unreadable trace is a UserError.
traces::Timeline load_torch_job(const std::string& path);

// The schedule of the first pipeline group (with dp > 1 every group runs the same one).
// UserError when the traces hold no torch pipeline actions or miss a rank; `path` names them.
RecoveredSchedule recover_torch_schedule(const traces::Timeline& t, const std::string& path);

}  // namespace meshscope::cli
