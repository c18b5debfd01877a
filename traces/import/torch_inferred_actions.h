// The actions of a torch pipeline schedule that writes no action ranges of its own: torch's
// Schedule1F1B runs forward_one_chunk / backward_one_chunk with only its send/recv ops and
// autograd's records around them. Read from the thread that issues the c10d::send / c10d::recv_
// ops, whose outermost ops fall into runs separated by those transfer ops:
//   backward run   outermost ops named "autograd::engine::evaluate_function: ..." (autograd's
//                  engine running the stage's backward);
//   forward run    other outermost ops of which at least one starts a flow to a later span of the
//                  same thread (autograd's forward -> backward link, "fwdbwd"): the stage forward
//                  (with the loss on the last stage). Runs without one (allocating a recv buffer,
//                  scaling gradients by 1/microbatches) are no stage's compute. In a step with
//                  no backward run (schedule.eval: forwards only, which autograd does not link),
//                  the runs with an op other than allocating (aten::empty*) or splitting the
//                  batch (aten::tensor_split, aten::split*, aten::chunk).
// A run never spans two step windows (ProfilerStep#N). The k-th forward run of a step is F k, the
// k-th backward run B k (torch's single-stage schedules run microbatches in order). A recv op
// between two runs belongs to the run after it (it receives that run's input), a send op to the run
// before it (it sends that run's output); each action's range spans its recvs, its ops and its
// sends.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/import/torch_actions.h"
#include "traces/timeline.h"

namespace meshscope::traces::importer {

struct InferredAction {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  TorchAction action;
};

struct InferredActions {
  uint16_t device = 0;
  uint16_t lane = 0;
  std::vector<InferredAction> actions;  // by begin; empty when the trace shows none
};

// `stage` is the one stage the rank runs. Spans must be in Timeline::sort_spans order.
InferredActions infer_single_stage_actions(const Timeline& t, int stage);

// Schedule1F1B run k times within one ProfilerStep (gradient accumulation: schedule.step() called
// k times before the optimizer step, as torch's `finalize_gradients` documents) reads above as one
// run of k*n microbatches, numbered on. A rank that is not the last stage runs
// min(n, stages - s) >= 2 forwards before its first backward, so its backwards catch up with its
// forwards only where an iteration ends; the last stage alternates F and B and shows no end. n is
// the forwards before the first such end on a first or middle rank of a merged Timeline (from its
// "pipeline_actions" and "pipeline_position"), the largest over those ranks; where it divides each
// inferred rank's forwards in its first step, every inferred rank's microbatches (spans, action
// names, "pipeline_actions") are numbered modulo n, so each iteration runs 0..n-1 as torch runs it.
// Returns n, or 0 where nothing was renumbered (one iteration a step, or no inferred ranks).
// Idempotent.
int renumber_accumulated_iterations(Timeline& t);

}  // namespace meshscope::traces::importer
