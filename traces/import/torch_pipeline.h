// torch.distributed.pipelining jobs read as pipelines: the action ranges its runtime writes
// ("PP:1F0", GPipe's "Forward i") label the spans under them with stage, microbatch and phase as
// meshscope's own traces carry them; a rank without GPU activity gets the thread that ran the
// actions as its device, with the ops under compute actions as its compute; sends and receives
// of different ranks are paired into flows through the stage -> rank placement the trace shows.
//
// Per rank (label_torch_pipeline, on one file's Timeline):
//   actions    the annotation spans on host threads whose names parse (torch_actions.h); the
//              thread holding most of them runs the schedule ("driving thread"). GPipe's ranges
//              name no stage: a single-stage schedule runs stage = rank here (torch places stage
//              i on pp rank i; the default process group is taken as the pp group), and
//              pair_torch_transfers renumbers it when the job has several pipeline groups.
//   labels     every other span of the driving thread takes the stage, microbatch and phase of
//              the action it begins in (asynchronous gloo:send/gloo:recv ranges: the action that
//              posted them). In an OVERLAP_F_B action, autograd's ops
//              ("autograd::engine::evaluate_function: ...") belong to its backward part, the
//              others to its forward part. GPU spans take the labels of the host op that launched
//              them (launch flows), else of the gpu_user_annotation action range around them on
//              their stream.
//   CPU rank   when the file has no GPU device: the driving thread's lane becomes a compute lane
//              (the device is named "rank R · CPU"), and each outermost op inside a compute action
//              becomes a kCompute span — except torch's transfer ops (c10d::*, gloo:*, nccl:*),
//              which stay host spans: GPipe's "Forward i" wraps its blocking recv and its send.
//              Time in a compute action outside its ops (waiting for the input, python) and in
//              transfer actions stays idle, as in meshscope's own traces, where a compute span
//              starts when its input is ready. gloo's collective ranges on the rank's threads
//              (gloo:all_reduce, ...) become kCollective spans: the rank's communication, its
//              wait for its peers included, as an NCCL kernel's is on a GPU. They name no group;
//              with dp > 1, pair_torch_transfers takes them as the dp group's (an assumption:
//              the gradient all-reduce) where the ranks list that group.
//   mesh       the rank's devices get mesh coordinate dp 0, pp = rank, tp 0 (one pipeline);
//              with dp > 1, pair_torch_transfers gives them their pipeline group and place in it.
//   metadata   "pipeline_actions": the first step's actions in order, space-separated, as torch
//              writes them (a single-stage schedule — GPipe, 1F1B — ends with the REDUCE_GRAD and
//              WAIT_REDUCE_GRAD its runtime does after the last backward without a range, as
//              torch's pipeline_order lists them); "pipeline_stages": the stages this rank ran;
//              "pipeline_position" of a single-stage rank: first, middle or last (whether its
//              forward actions receive and send; torch_pipeline_groups.h).
// Across ranks (pair_torch_transfers, on the merged Timeline): a send of stage s in the forward
// pass goes to stage s+1, in the backward pass to s-1; it is paired with the recv of that stage,
// phase and microbatch on the rank that ran it, the k-th send with the k-th recv. Pairs are made
// within one kind of record: c10d::send -> gloo:recv ranges (gloo's own send range opens only as
// c10d::send returns, at times after the recv it fed had ended, so the op that posted the send
// stands for its begin), c10d::send -> c10d::recv_ ops where no gloo range covers those receives
// (the op only posts a receive, often before its send began), GPU kSend -> kRecv spans. metadata
// "pipeline_stage_owner": the rank of each stage, in stage order (of the first pipeline group).
// With dp > 1 each pipeline group (torch_pipeline_groups) has its own placement and pairs only
// within itself. Schedule1F1B's actions read from its ops are numbered per iteration first, where
// it ran several within one step (gradient accumulation: renumber_accumulated_iterations in
// torch_inferred_actions.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/import/torch_pipeline_groups.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

struct TorchPipelineLabels {
  int actions = 0;              // action ranges found on the driving thread
  uint64_t labelled_spans = 0;  // spans given a stage
  bool cpu_device = false;      // the driving thread became the rank's device
};

// Labels one rank's Timeline in place (see above). A file without torch pipeline ranges is left
// as it is (actions == 0).
TorchPipelineLabels label_torch_pipeline(Timeline& t);

// Adds send -> recv flows across the ranks of a merged Timeline, within each pipeline group, and
// gives each device its group as dp and its place in it as pp (when there are 2+ groups);
// returns how many flows.
size_t pair_torch_transfers(Timeline& t);

// What a trace of a torch pipelining job says of its schedule: each rank's actions in order
// (the first profiled step), from the metadata label_torch_pipeline leaves ("pipeline_actions",
// or "rank R.pipeline_actions" after merging). Empty when the trace has none.
std::map<int, std::vector<std::string>> torch_action_orders(const Timeline& t);

}  // namespace meshscope::traces::importer
