// The host-side description of one pipeline stage on one tp rank: its linears with local shapes,
// where each sits in the parameter buffer, which tp collectives it issues, and what it costs.
#pragma once

#include <cstddef>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "sim/model/partition.h"
#include "sim/model/stage_cost.h"
#include "sim/model/workload.h"

namespace meshscope::exec {

struct LinearLayout {
  int global_index = 0;  // position among the workload's linears (model::init_weights order)
  int in = 0;            // local (this tp rank's) shapes
  int out = 0;
  int bias = 0;  // bias entries held (row split: the full out)
  model::Activation act = model::Activation::kNone;
  model::TpSplit split = model::TpSplit::kReplicated;
  bool needs_dx = true;  // false for the first linear of stage 0: no gradient for the data
  int fwd_inner = -1;    // index into the rank's InnerInfo list; -1: no tp collective
  int bwd_inner = -1;
  size_t w_offset = 0;  // floats into the stage's parameter (and gradient) buffer
  size_t b_offset = 0;
};

struct UnitLayout {
  int first_linear = 0;  // into StageLayout::linears
  int num_linears = 0;
  bool residual = false;
};

struct StageLayout {
  int stage = 0;
  bool first = false;  // stage 0: input is the data
  bool last = false;   // last stage: computes the loss
  int tp = 1;
  int tp_rank = 0;
  int rows = 0;  // samples per microbatch
  int microbatches = 0;
  int input_dim = 0;  // local width of the stage input and output
  int output_dim = 0;
  model::LossKind loss = model::LossKind::kMse;
  float loss_scale = 0;
  float lr = 0;
  size_t param_count = 0;
  std::vector<LinearLayout> linears;
  std::vector<UnitLayout> units;
  model::StageCost cost;
  // Floats of each of the two buffers the stage's schedule-level ALLTOALLs send from and receive
  // into (the largest of them; 0: none). Their payload is traffic the stage's math does not read.
  size_t exchange_floats = 0;

  size_t input_bytes() const { return sizeof(float) * size_t(rows) * input_dim; }
  size_t output_bytes() const { return sizeof(float) * size_t(rows) * output_dim; }
};

// Builds the layout of `range` as stage `stage` of `num_stages` for tp rank `tp_rank`, appending
// the tp collectives it issues to `inner` (their indices land in the LinearLayouts).
StageLayout make_stage_layout(const model::Workload& w, const model::StageRange& range, int stage,
                              int num_stages, int tp, int tp_rank, int rows, int microbatches,
                              const model::StageCost& cost, std::vector<capture::InnerInfo>& inner);

}  // namespace meshscope::exec
