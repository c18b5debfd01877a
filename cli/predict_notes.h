// Lines `meshscope predict` prints under its table about how the rows were made: what the user
// asked for that the prediction took its own way, said once for all rows.
#pragma once

#include <string>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/predict/config.h"

namespace meshscope::cli {

// A calibration's collective fit prices every group, however large (cost::collective_time): where
// a config's dp or tp group is larger than any it was fitted on, that is an extrapolation ("" when
// none is): a fit on one node's 2 GPUs, given to an all-reduce across 128 nodes.
std::string collective_fit_beyond_its_groups(
    const cost::Calibration& cal, const std::vector<const predict::PredictConfig*>& rows);

// Pipelines whose stages cannot hold the same number of layers (pp x virtual_stages does not
// divide model.layers, and model.layers_per_stage is not given) run on the even split, which
// Megatron-LM refuses (its pipeline needs num_layers divisible by the stages): one line per
// layers and stages, with the split taken ("" when every row divides evenly).
std::string uneven_layer_splits(const std::vector<const predict::PredictConfig*>& rows);

// What a row asks for that does nothing or little as given, one line each ("" when nothing): a
// pipeline fed one microbatch per replica (batch.global defaults to micro x dp), which runs its
// stages in turn; options.sequence_parallel with tp 1, which Megatron-LM turns off with a warning.
std::string settings_that_do_little(const std::vector<const predict::PredictConfig*>& rows);

// Rows whose schedule their framework does not run (its profile's "schedules": Megatron-LM runs
// 1F1B and interleaved 1F1B only): one line per framework naming what it runs, the rows a what-if
// of its costs under another schedule ("" when every row's framework runs its schedule).
std::string schedules_the_framework_lacks(const std::vector<const predict::PredictConfig*>& rows);

}  // namespace meshscope::cli
