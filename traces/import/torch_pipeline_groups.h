// Which ranks of a torch pipelining job form one pipeline, from the process groups each rank's
// trace lists (distributedInfo.pg_config, metadata "process_groups") and what each rank ran
// (label_torch_pipeline's metadata):
//
//   pipeline group   a group of 2+ ranks, not every rank, whose traced members could be one
//                    pipeline. Multi-stage schedules name their stages, and a pipeline's ranks run
//                    no stage twice (a data-parallel group's run the same ones). Single-stage
//                    schedules (GPipe, 1F1B) name none; a rank's place shows in its forward
//                    actions ("pipeline_position"): the first stage receives no input and the last
//                    sends no output, so a pipeline holds one first and one last rank (at most one
//                    of each while some of its ranks are untraced), and the ranks of a
//                    data-parallel group all sit at one place.
//   dp = 1           a job whose traces name no such group is one pipeline of every traced rank.
//   stage            a single-stage rank runs the stage of its index in its pipeline group
//                    (torch places stage i on group rank i); number_single_stage_ranks relabels
//                    its spans and metadata so (each rank's own file can only say stage = rank).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::traces::importer {

// The metadata `name` of every rank of a merged Timeline ("rank R.name"), or of a single one
// (its "rank" metadata, else 0).
std::map<int, std::string> per_rank_metadata(const Timeline& t, std::string_view name);

// A metadata value that is a whole integer, else nullopt.
std::optional<int64_t> metadata_int(const Timeline& t, const std::string& key);

// The pipeline groups of a merged Timeline, each its global ranks in pipeline-rank order (see
// above); one group of every rank when the traces name none. Sorted by first rank.
std::vector<std::vector<int>> torch_pipeline_groups(const Timeline& t);

// The ranks of a job whose traces a merged Timeline lacks: for each traced rank, the members of
// its pipeline (the smallest of its process groups that could be its pipeline, see above) that
// have no trace. Empty when the traces name no groups.
std::vector<int> torch_untraced_ranks(const Timeline& t);

// The ranks whose process groups include their data-parallel group: the ranks at their place in
// every pipeline group of `groups` (2+ groups of one size). Empty otherwise.
std::set<int> ranks_listing_their_dp_group(const Timeline& t,
                                           const std::vector<std::vector<int>>& groups);

// Gives each single-stage rank of `groups` the stage of its index in its group: its spans'
// stage, its "pipeline_actions" and "pipeline_stages", the names of its inferred action ranges.
// Idempotent; ranks of multi-stage schedules are left as they are.
void number_single_stage_ranks(Timeline& t, const std::vector<std::vector<int>>& groups);

}  // namespace meshscope::traces::importer
