// The schedule a torch.distributed.pipelining job ran, from each rank's actions in order (as the
// torch importer reads them from the traces, traces/import/torch_pipeline.h): written as torch's
// CSV rows (`csv`, byte for byte what torch writes for the run) and read as a Schedule. GPipe and
// 1F1B run no transfer actions of their own (their rows are compute and REDUCE_GRAD): their
// Schedule is read from the compute cells, lowered with meshscope's transfers, so that it
// validates and runs. Shared by `schedules --from-trace`, `predict --from-trace` and the viewer.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/schedule/torch_csv.h"

namespace meshscope::predict {

struct RecoveredSchedule {
  std::string csv;
  schedule::TorchCsv parsed;
  // The pipeline group recovered (the first of `groups` below): its global ranks in
  // pipeline-rank order, and how many groups ran.
  std::vector<int> ranks;
  int groups = 1;
  // The first rank of another group whose actions are not those of its place in the first
  // group (-1 when every group ran the same schedule).
  int differing_rank = -1;
};

// What the traces do not hold to recover a schedule from; the message names `path`.
struct RecoveryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The schedule of the first pipeline group (with dp > 1 every group runs the same one).
// `orders`: each global rank's torch action names in order (importer::torch_action_orders);
// `groups`: the pipeline groups (importer::torch_pipeline_groups); `groups_named`: whether the
// traces named them (their process groups), so that one group is the pipeline as it stands (the
// second replica's ranks 2 and 3 alone); otherwise the pipeline is ranks 0 to the last traced.
// RecoveryError when there are no actions, a rank of the group is missing, or the rows do not
// parse as a schedule.
RecoveredSchedule recover_schedule(const std::map<int, std::vector<std::string>>& orders,
                                   const std::vector<std::vector<int>>& groups,
                                   const std::string& path, bool groups_named = false);

}  // namespace meshscope::predict
